import Foundation
import Testing
import TransferProtocol
@testable import TransferCore

@Suite("Host rules")
struct HostPolicyTests {
    private func verdict(_ url: String, _ policy: HostPolicy) throws -> HostGuard.Verdict {
        HostGuard(policy).verdict(for: try #require(URL(string: url)))
    }

    private func isRefused(_ verdict: HostGuard.Verdict, mentioning words: String...) -> Bool {
        guard case .refused(let message) = verdict else { return false }
        return words.allSatisfy { message.contains($0) }
    }

    @Test func rangesParseAndMatchInEitherFamily() throws {
        let ten = try #require(IPNetwork("10.0.0.0/8"))
        #expect(ten.contains(try #require(IPAddress("10.200.3.4"))))
        #expect(!ten.contains(try #require(IPAddress("11.0.0.1"))))
        #expect(ten.contains(try #require(IPAddress("::ffff:10.1.2.3"))), "an IPv4-mapped address is its IPv4 address")
        let linkLocal = try #require(IPNetwork("fe80::/10"))
        #expect(linkLocal.contains(try #require(IPAddress("[fe80::1%eth0]"))))
        #expect(!linkLocal.contains(try #require(IPAddress("fec0::1"))))
        #expect(IPNetwork("::ffff:127.0.0.0/104") == IPNetwork("127.0.0.0/8"), "a mapped range is the IPv4 range")
        #expect(IPNetwork("10.1.2.3/8")?.address.description == "10.0.0.0")
        for bad in ["10.0.0.0/33", "1.2.3.4/", "1.2.3.4/x", "fe80::1%eth0/64", "127.1", "::/129", "example.com"] {
            #expect(IPNetwork(bad) == nil, "\(bad)")
        }
    }

    @Test func entriesAreNamesWildcardsAddressesOrRanges() {
        #expect(HostRule("Example.COM.") == .name("example.com"))
        #expect(HostRule("*.example.com") == .subdomains(of: "example.com"))
        #expect(HostRule("[::1]").map { "\($0)" } == "::1")
        #expect(HostRule("192.168.0.0/16").map { "\($0)" } == "192.168.0.0/16")
        for bad in ["", "*", "*example.com", "a.*.com", "http://example.com", "example.com:80", "a b", "127.1", "2130706433", "ex_ample..com"] {
            #expect(HostRule(bad) == nil, "\(bad)")
        }
        let wildcard = HostRule.subdomains(of: "example.com")
        #expect(wildcard.matches(host: "dl.example.com") && wildcard.matches(host: "a.b.example.com"))
        #expect(!wildcard.matches(host: "example.com") && !wildcard.matches(host: "badexample.com"))
    }

    /// Every way of writing an address of this machine or its link that libcurl would connect to.
    @Test(arguments: [
        "http://127.0.0.1/", "http://127.1/", "http://2130706433/", "http://0x7f000001/", "http://127.0.0.2:8080/x",
        "http://0/", "http://0.0.0.0/", "http://[::]/", "http://[::1]/", "http://[::ffff:127.0.0.1]/", "http://[::ffff:7f00:1]/",
        "http://[::127.0.0.1]/", "http://169.254.169.254/latest/meta-data/", "http://[::ffff:169.254.169.254]/",
        "http://[fe80::1%25lo]/", "http://[fd00:ec2::254]/", "http://localhost/", "http://LOCALHOST./", "https://%31%32%37.0.0.1/",
    ])
    func localAddressesAreRefusedWhenDenied(url: String) throws {
        let policy = HostPolicy(deniesLocalAddresses: true, localAddressesSetting: "\"deny\"")
        #expect(isRefused(try verdict(url, policy), mentioning: "local_addresses", "\"allow\""), "\(url)")
        #expect(try verdict(url, HostPolicy()) == .allowed, "allowed by default: \(url)")
    }

    @Test func otherAddressesPassTheLocalRule() throws {
        let policy = HostPolicy(deniesLocalAddresses: true)
        for url in ["http://93.184.215.14/", "http://10.1.2.3/", "http://[2001:db8::1]/", "http://128.0.0.1/", "http://169.255.0.1/"] {
            #expect(try verdict(url, policy) == .allowed, "\(url)")
        }
    }

    @Test func deniedEntriesMatchNamesWildcardsAndResolvedAddresses() throws {
        let policy = HostPolicy(denied: ["evil.example", "*.corp.example", "10.0.0.0/8", "127.0.0.1"].compactMap(HostRule.init), source: "test.json")
        #expect(isRefused(try verdict("http://EVIL.example/x", policy), mentioning: "\"evil.example\"", "denied_hosts", "test.json"))
        #expect(isRefused(try verdict("http://a.b.corp.example/", policy), mentioning: "\"*.corp.example\""))
        #expect(isRefused(try verdict("http://10.9.8.7/", policy), mentioning: "\"10.0.0.0/8\""))
        #expect(isRefused(try verdict("http://[::ffff:10.9.8.7]/", policy), mentioning: "\"10.0.0.0/8\""))
        #expect(isRefused(try verdict("http://localhost:8080/", policy), mentioning: "localhost (which resolves to 127.0.0.1)", "\"127.0.0.1\""))
        #expect(try verdict("http://11.0.0.1/", policy) == .allowed)
        let names = HostPolicy(denied: policy.denied.filter { !$0.isNetwork })
        #expect(try verdict("http://corp.example/", names) == .allowed, "the wildcard leaves the domain itself alone")
    }

    @Test func allowedEntriesAreTheOnlyHostsWhenGiven() throws {
        let policy = HostPolicy(allowed: ["deb.debian.org", "*.example.com", "192.0.2.0/24"].compactMap(HostRule.init))
        #expect(try verdict("https://deb.debian.org/debian/README", policy) == .allowed)
        #expect(try verdict("https://dl.example.com/x", policy) == .allowed)
        #expect(try verdict("http://192.0.2.7/x", policy) == .allowed)
        #expect(isRefused(try verdict("http://198.51.100.1/", policy), mentioning: "allowed_hosts"))
        // With names only, an unlisted name is refused without a lookup.
        let names = HostPolicy(allowed: policy.allowed.filter { !$0.isNetwork })
        #expect(isRefused(try verdict("http://example.org/", names), mentioning: "example.org", "allowed_hosts", "add it"))
        #expect(isRefused(try verdict("http://localhost/", policy), mentioning: "localhost (which resolves to 127.0.0.1)", "allowed_hosts"))
        let denyWins = HostPolicy(allowed: policy.allowed, denied: ["dl.example.com"].compactMap(HostRule.init))
        #expect(isRefused(try verdict("https://dl.example.com/x", denyWins), mentioning: "denied_hosts"))
    }

    @Test func aNameThatDoesNotResolveIsUnresolvedOnlyWhenAddressesMatter() throws {
        let url = "http://no-such-host.invalid/x"
        guard case .unresolved(let message) = try verdict(url, HostPolicy(deniesLocalAddresses: true)) else {
            Issue.record("a name that does not resolve was judged without its addresses")
            return
        }
        #expect(message.contains("no-such-host.invalid"))
        #expect(try verdict(url, HostPolicy()) == .allowed, "no rule looks at addresses: no lookup")
        #expect(isRefused(try verdict(url, HostPolicy(denied: [.name("no-such-host.invalid")], deniesLocalAddresses: true))), "a denied name needs no lookup")
    }

    @Test func submitGetsTheHostNotAllowedCodeWithTheURLRedacted() async throws {
        let hosts = HostGuard(HostPolicy(deniesLocalAddresses: true))
        let url = try #require(URL(string: "http://user:hunter2@127.0.0.1:9/x?access_token=t0ken"))
        do {
            try await hosts.admit(url)
            Issue.record("a loopback URL was admitted")
        } catch {
            #expect(error.kind == .hostNotAllowed)
            #expect(!error.message.contains("hunter2") && !error.message.contains("t0ken"), "\(error.message)")
        }
        hosts.replace(with: HostPolicy())
        try await hosts.admit(url)
    }
}
