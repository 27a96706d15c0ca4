// The tool tree the staged memo tests commit: a runtime with child_schemas and a script on it, a
// Python tool on the built-in python runtime (its syntax verdict is part of the result) and an API
// tool whose high memory limit is a warning (an error with --strict).
export const STAGED_TOOLS = {
  ".ai/tools/rt.yaml": "tool_id: rt\ntool_type: runtime\nversion: 1.0.0\nexecutor: subprocess\nconfig: { command: bash }\nvalidation:\n  child_schemas:\n    - match: { tool_type: script }\n      schema: { type: object }\n",
  ".ai/tools/hi.sh": { content: "#!/bin/bash\n# ---\n# tool_id: hi\n# tool_type: script\n# version: 1.0.0\n# executor: rt\n# ---\necho hi\n", mode: 0o755 },
  ".ai/tools/py/tool.yaml": "tool_id: py\ntool_type: script\nversion: 1.0.0\nexecutor: python_runtime\nentrypoint: main.py\n",
  ".ai/tools/py/main.py": "print('hi')\n",
  ".ai/tools/web.yaml": "tool_id: web\ntool_type: api\nversion: 1.0.0\nexecutor: http_client\nconfig: { method: GET, url: https://x.test/ }\nlimits: { memory_mb: 1024 }\n",
};
