#!/usr/bin/env bash
# ---
# tool_id: greet
# tool_type: script
# version: 1.0.0
# executor: bash_runtime@^1
# description: Greets someone by name, a given number of times.
# parameters:
#   - name: name
#     type: string
#     required: true
#     minLength: 1
#     maxLength: 64
#     description: Who to greet.
#   - name: times
#     type: integer
#     default: 1
#     minimum: 1
#     maximum: 5
#     description: How many times to say it.
# config:
#   entrypoint: greet.sh
#   args: ["{name}", "{times}"]
# ---
# An example bash tool made by "kiwi init". kiwi substitutes each {parameter} in `args` as exactly
# one argument (never through a shell), so the script reads them as "$1" and "$2".
# Try it without kiwi:  bash greet.sh Ada 2
set -euo pipefail

name="${1:?usage: greet.sh NAME [TIMES]}"
times="${2:-1}"
for ((i = 0; i < times; i++)); do
  printf 'Hello, %s!\n' "$name"
done
