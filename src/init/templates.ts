// What `kiwi init` writes: one working example of each everyday tool type, as data. The files in
// ./templates/ are real scripts and manifests (bundled into the binary as text) so they can be
// linted and run as they are.
import everything from "./templates/everything.yaml" with { type: "text" };
import everythingEcho from "./templates/everything_echo.yaml" with { type: "text" };
import greet from "./templates/greet.sh" with { type: "text" };
import weatherForecast from "./templates/weather_forecast.yaml" with { type: "text" };
import wordCount from "./templates/word_count.py" with { type: "text" };

export interface Template {
  /** Project-relative destination, `/`-separated. */
  path: string;
  /** The tool id the file defines; a project that already has this id keeps its own. */
  toolId: string;
  /** What the example shows, for `kiwi init` output and docs. */
  kind: string;
  content: string;
  /** Scripts are executable so they also run on their own (`./word_count.py`). */
  mode: number;
}

/** The scaffold, in the order it is written and listed. */
export const TEMPLATES: readonly Template[] = [
  { path: ".ai/tools/word_count.py", toolId: "word_count", kind: "script on python_runtime", content: wordCount, mode: 0o755 },
  { path: ".ai/tools/greet.sh", toolId: "greet", kind: "script on bash_runtime", content: greet, mode: 0o755 },
  { path: ".ai/tools/weather_forecast.yaml", toolId: "weather_forecast", kind: "api on http_client", content: weatherForecast, mode: 0o644 },
  { path: ".ai/tools/everything.yaml", toolId: "everything", kind: "mcp_server on subprocess", content: everything, mode: 0o644 },
  { path: ".ai/tools/everything_echo.yaml", toolId: "everything_echo", kind: "mcp_tool on everything", content: everythingEcho, mode: 0o644 },
];
