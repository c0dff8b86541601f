// The operator page: every call that waits for a decision, across all chats, with Approve and
// Reject (runtime.approve / runtime.reject on the server), and the orders placed.
// The operator's token comes in the link's #fragment (the server printed the link).
const token = new URLSearchParams(location.hash.slice(1)).get("token") ?? "";
const authorization = { authorization: `Bearer ${token}` };
const pendingList = document.querySelector("#pending");
const orderList = document.querySelector("#orders");

function item(text, ...children) {
  const node = document.createElement("li");
  node.append(text, ...children);
  return node;
}

function button(label, className, testId, onClick) {
  const node = document.createElement("button");
  node.textContent = label;
  node.className = className;
  node.dataset.testid = testId;
  node.onclick = onClick;
  return node;
}

async function decide(action, approved) {
  await fetch("/api/operator/decide", {
    method: "POST",
    headers: { "content-type": "application/json", ...authorization },
    body: JSON.stringify({
      executionId: action.executionId,
      seq: action.seq,
      approved,
      ...(approved ? {} : { reason: "rejected by the operator" }),
    }),
  });
  await refresh();
}

async function refresh() {
  try {
    const response = await fetch("/api/operator", { headers: authorization });
    if (!response.ok) return;
    const { pending, orders } = await response.json();
    pendingList.replaceChildren(
      ...(pending.length === 0
        ? [item("Nothing waits.")]
        : pending.map((action) =>
            item(
              `${action.description} `,
              button("Approve", "approve", "operator-approve", () => decide(action, true)),
              " ",
              button("Reject", "reject", "operator-reject", () => decide(action, false)),
            ),
          )),
    );
    orderList.replaceChildren(
      ...(orders.length === 0
        ? [item("No orders yet.")]
        : orders.map((order) => item(`${order.orderId}: ${order.quantity} × ${order.sku}`))),
    );
  } catch {
    // The server is restarting: the next refresh will show it.
  }
}

setInterval(refresh, 1_000);
refresh();
