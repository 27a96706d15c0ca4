// "Did you mean": the nearest candidate by edit distance when it is close enough to be a typo, and
// a name that differs only in case (tool ids are lower case; people type SUMMER or Summer).
import { describe, expect, test } from "bun:test";
import { suggest } from "../../src/resolve/suggest.ts";

describe("suggest", () => {
  test.each([
    ["summr", ["summer", "greet"], "summer"],
    ["SUMMER", ["summer", "greet"], "summer"],
    ["Weather_Forecast", ["weather_forecast", "weather"], "weather_forecast"],
    ["--jsn", ["--json", "--strict"], "--json"],
    ["deploy", ["summer", "greet"], undefined],
  ] as const)("%s among %p suggests %p", (input, candidates, expected) => {
    expect(suggest(input, candidates)).toBe(expected);
  });
});
