// The http_client host policy: declared allow-lists, and loopback/private/link-local targets refused
// unless declared, in every spelling an address can take.
import { afterAll, describe, expect, test } from "bun:test";
import { KiwiError } from "../../src/errors.ts";
import { assertUrlAllowedIo, resolveHostAddresses } from "../../src/exec/net-policy-io.ts";
import { type AddressClass, checkUrlAllowed, classifyAddress, describeHostPolicy, parseHostPolicy } from "../../src/exec/net-policy.ts";
import { parseHostRule } from "../../src/manifest/host-rule.ts";
import type { Capability } from "../../src/manifest/model.ts";

const net = (...hosts: string[]): Capability[] => [{ name: "net.outbound", hosts, pointer: "/requires/0" }];
const policy = (...hosts: string[]) => parseHostPolicy("weather_api", hosts.length ? net(...hosts) : []);
const check = (url: string, p = policy(), addresses: string[] = []) => checkUrlAllowed(new URL(url), p, addresses);

describe("classifyAddress", () => {
  test.each([
    ["127.0.0.1", "loopback"],
    ["127.255.255.254", "loopback"],
    ["10.1.2.3", "private"],
    ["172.16.0.1", "private"],
    ["172.32.0.1", "public"],
    ["192.168.1.1", "private"],
    ["169.254.169.254", "link-local"],
    ["100.64.0.1", "shared (carrier-grade NAT)"],
    ["0.0.0.0", "unspecified"],
    ["255.255.255.255", "broadcast"],
    ["224.0.0.1", "multicast"],
    ["8.8.8.8", "public"],
    ["0x7f000001", "loopback"],
    ["0177.0.0.1", "loopback"],
    ["2130706433", "loopback"],
    ["::1", "loopback"],
    ["[::1]", "loopback"],
    ["::", "unspecified"],
    ["fe80::1", "link-local"],
    ["fe80::1%eth0", "link-local"],
    ["fd12:3456::1", "unique-local"],
    ["fec0::1", "private"],
    ["::ffff:127.0.0.1", "loopback"],
    ["::ffff:7f00:1", "loopback"],
    ["::ffff:10.0.0.1", "private"],
    ["::127.0.0.1", "loopback"],
    ["64:ff9b::7f00:1", "loopback"],
    ["64:ff9b::808:808", "public"],
    ["2002:7f00:1::", "loopback"],
    ["2001:db8::1", "reserved"],
    ["2606:4700::1111", "public"],
    ["not an ip", "reserved"],
  ] as [string, AddressClass][])("%s is %s", (ip, want) => {
    expect(classifyAddress(ip)).toBe(want);
  });
});

describe("checkUrlAllowed without declared hosts", () => {
  test.each([
    "http://127.0.0.1:8080/",
    "http://0x7f000001/",
    "http://0177.0.0.1/",
    "http://2130706433/",
    "http://127.1/",
    "http://[::1]/",
    "http://[::ffff:127.0.0.1]/",
    "http://[::ffff:7f00:1]/",
    "http://0.0.0.0/",
    "http://localhost:3000/",
    "http://LOCALHOST./",
    "http://api.localhost/",
    "http://169.254.169.254/latest/meta-data/",
    "http://10.0.0.5/admin",
    "http://[fd00::1]/",
  ])("refuses %s (request forgery)", (url) => {
    const v = check(url);
    expect(v.ok).toBe(false);
    if (!v.ok) {
      expect(v.message).toContain("refused to prevent request forgery");
      expect(v.hint).toMatch(/^declare it, e\.g\. net\.outbound: \[/);
    }
  });

  test.each([
    ["http://0.0.0.0/", "0.0.0.0 is an unspecified address"],
    ["http://[::]/", ":: is an unspecified address"],
    ["http://10.0.0.5/", "10.0.0.5 is a private address"],
  ])("names the kind of %s with its article", (url, phrase) => {
    expect(check(url)).toMatchObject({ ok: false, message: expect.stringContaining(`: ${phrase} (refused to prevent request forgery)`) });
  });

  test("refuses a public-looking name that resolves to a private address", () => {
    const v = check("https://rebind.example.com/x", policy(), ["93.184.216.34", "10.0.0.7"]);
    expect(v).toMatchObject({
      ok: false,
      message: "weather_api may not contact https://rebind.example.com: rebind.example.com resolves to 10.0.0.7, a private address (refused to prevent request forgery)",
      hint: 'declare it, e.g. net.outbound: ["rebind.example.com"], if the tool really must reach it',
    });
  });

  test("allows a public host", () => {
    expect(check("https://api.weather.gov/points", policy(), ["93.184.216.34", "2606:2800:220:1::1"]).ok).toBe(true);
  });

  test.each(["file:///etc/passwd", "ftp://example.com/", "gopher://127.0.0.1:25/"])("refuses the scheme of %s", (url) => {
    expect(check(url).ok).toBe(false);
  });
});

describe("checkUrlAllowed with declared hosts", () => {
  test.each([
    ["api.example.com", "https://api.example.com/v1", true],
    ["api.example.com", "https://API.Example.com./v1", true],
    ["api.example.com", "https://other.example.com/", false],
    ["api.example.com", "https://api.example.com.evil.net/", false],
    ["*.example.com", "https://a.b.example.com/", true],
    ["*.example.com", "https://example.com/", false],
    ["*.example.com", "https://badexample.com/", false],
    ["api.example.com:8443", "https://api.example.com:8443/", true],
    ["api.example.com:8443", "https://api.example.com/", false],
    ["https://api.example.com", "https://api.example.com/", true],
    ["127.0.0.1", "http://127.0.0.1:5000/", true],
    ["127.0.0.1", "http://0x7f000001:5000/", true],
    ["127.0.0.1", "http://127.0.0.2/", false],
    ["127.0.0.1:5000", "http://127.0.0.1:5001/", false],
    ["localhost", "http://localhost:5000/", true],
    ["[::1]", "http://[::1]:80/", true],
    ["10.0.0.0/8", "http://10.20.30.40/", true],
    ["10.0.0.0/8", "http://11.0.0.1/", false],
    ["*", "https://anything.example.org/", true],
    ["*", "http://127.0.0.1/", false],
  ])("declared %s: %s is allowed: %p", (declared, url, ok) => {
    expect(check(url, policy(declared), ["93.184.216.34"]).ok).toBe(ok);
  });

  test("a declared name may resolve to a private address (the declaration names it)", () => {
    expect(check("http://db.internal:5432/", policy("db.internal:5432"), ["10.0.0.9"]).ok).toBe(true);
  });

  test("names the declared hosts and the pointer when refusing", () => {
    expect(check("https://evil.example.net/", policy("api.example.com", "*.github.com"))).toMatchObject({
      ok: false,
      message: "weather_api may not contact evil.example.net:443: it is not among the declared net.outbound hosts (api.example.com, *.github.com)",
      hint: 'add "evil.example.net" to net.outbound in the tool\'s manifest (/requires/0) if it should be reachable',
    });
  });

  test("an undeclared IPv6 address is named in brackets, and the declaration the hint gives matches it", () => {
    const p = policy("127.0.0.1:8443");
    const verdict = check("http://[::1]:8080/", p);
    expect(verdict).toMatchObject({
      ok: false,
      message: "weather_api may not contact [::1]:8080: it is not among the declared net.outbound hosts (127.0.0.1:8443)",
      hint: 'add "[::1]:8080" to net.outbound in the tool\'s manifest (/requires/0) if it should be reachable',
    });
    // Followed, the hint admits the address it was given for (not ::1:8080, another address).
    expect(check("http://[::1]:8080/", policy("127.0.0.1:8443", "[::1]:8080")).ok).toBe(true);
    expect(check("http://[::1]/", policy("example.com"))).toMatchObject({ ok: false, hint: expect.stringContaining('add "::1" to net.outbound') });
  });

  test("a policy that is not enforced (--sandbox=off) allows anything", () => {
    expect(check("http://127.0.0.1/", parseHostPolicy("t", [], false)).ok).toBe(true);
  });
});

describe("parseHostRule", () => {
  test.each(["https://api.example.com/v1", "exa mple.com", "host:99999", "*.", "10.0.0.0/33", ""])("rejects %p", (raw) => {
    expect(parseHostRule(raw)).toBeNull();
  });

  test.each([
    ["bücher.example", "https://bücher.example/", true],
    ["BÜCHER.example:8443", "https://xn--bcher-kva.example:8443/", true],
    ["*.bücher.example", "https://api.bücher.example/", true],
    ["*.bücher.example", "https://bücher.example/", false],
    ["bücher.example", "https://buecher.example/", false],
  ])("an internationalised name %p is declared as the URL names it (punycode): %p allowed %p", (declared, url, ok) => {
    expect(parseHostRule(declared)).not.toBeNull();
    expect(check(url, policy(declared), ["93.184.216.34"]).ok).toBe(ok);
  });

  test("an invalid entry still restricts: it matches nothing and is reported", () => {
    const p = policy("https://api.example.com/v1");
    expect([p.restricted, p.invalid]).toEqual([true, ["https://api.example.com/v1"]]);
    expect(check("https://api.example.com/", p).ok).toBe(false);
    expect(describeHostPolicy(p)).toContain("ignored (not hosts): https://api.example.com/v1");
  });
});

describe("describeHostPolicy", () => {
  test.each([
    [[], "hosts: any public host (no net.outbound hosts declared); loopback, private and link-local addresses refused unless declared;"],
    [["api.example.com"], "hosts: only api.example.com (/requires/0), checked before each request and redirect;"],
  ])("for %p starts with %p and says connections go to checked addresses only, through kiwi's proxy", (hosts, start) => {
    const text = describeHostPolicy(policy(...hosts));
    expect(text.startsWith(start)).toBe(true);
    expect(text).toContain("kiwi's proxy, which connects only to an address it checked itself (a DNS answer that changes in between, rebinding, cannot slip a private address in)");
    expect(text).not.toContain("not caught");
  });
});

describe("assertUrlAllowedIo against a real loopback server", () => {
  let hits = 0;
  const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => (hits++, new Response("inside")) });
  afterAll(() => server.stop(true));

  test("an undeclared tool is stopped before any request reaches the server", async () => {
    const url = new URL(`http://localhost:${server.port}/`);
    const error = await assertUrlAllowedIo(url, policy()).catch((e) => e);
    expect(error).toBeInstanceOf(KiwiError);
    expect((error as KiwiError).code).toBe("E_SANDBOX");
    expect(hits).toBe(0);
  });

  test("the same request passes once 127.0.0.1 is declared, and reaches the server", async () => {
    const url = new URL(`http://127.0.0.1:${server.port}/`);
    await assertUrlAllowedIo(url, policy("127.0.0.1"));
    expect(await (await fetch(url)).text()).toBe("inside");
    expect(hits).toBe(1);
  });

  test("localhost resolves to loopback addresses", async () => {
    const addresses = await resolveHostAddresses("localhost");
    expect(addresses.length).toBeGreaterThan(0);
    for (const a of addresses) expect(classifyAddress(a)).toBe("loopback");
  });
});
