// ui/ is the only place that prints: human text, --json documents, SARIF, colours, progress and
// prompts. It renders values it is given and must not read the project, hash or run anything.
export { errorDocument, renderError } from "./error.ts";
export { colors, renderJson, showJson, showNote, showResult, writeFully } from "./output.ts";
