// A config that does not load: it throws while being imported, as one missing a setting would.
const url = process.env.CODEMODE_TEST_UNSET_DATABASE_URL;
if (!url) throw new Error("DATABASE_URL is not set\n    at a stack line that must not be printed");
export default url;
