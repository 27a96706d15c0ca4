#!/usr/bin/env python3
"""
---
tool_id: word_count
tool_type: script
version: 1.0.0
executor: python_runtime@^1
description: Counts the lines, words and characters of a text and lists its most frequent words.
parameters:
  - name: text
    type: string
    required: true
    minLength: 1
    maxLength: 100000
    description: The text to count.
  - name: top
    type: integer
    default: 3
    minimum: 0
    maximum: 20
    description: How many of the most frequent words to list.
config:
  entrypoint: word_count.py
---
An example Python tool made by "kiwi init". kiwi passes the parameters as one JSON object on
stdin; the result is printed as JSON on stdout. Try it without kiwi:
    echo '{"text": "to be or not to be"}' | python3 word_count.py
"""
import collections
import json
import re
import sys


def main() -> int:
    params = json.load(sys.stdin)
    text = params["text"]
    top = params.get("top", 3)
    words = re.findall(r"[\w']+", text.lower())
    result = {
        "lines": len(text.splitlines()),
        "words": len(words),
        "characters": len(text),
        "top": [{"word": w, "count": n} for w, n in collections.Counter(words).most_common(top)],
    }
    json.dump(result, sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
