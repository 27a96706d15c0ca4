// ui/ is the only place that prints: human text, --json documents, SARIF, colours, progress and
// prompts. It renders values it is given and must not read the project, hash or run anything.
