public import Foundation
import Synchronization
import TransferProtocol

/// The live ``HostPolicy`` and the checks made with it: at submit, when each attempt starts, and
/// on every redirect. The daemon replaces the policy on reload.
///
/// A check resolves the host name when the policy looks at addresses, and libcurl resolves it
/// again when it connects: a name whose DNS answer changes between the two (DNS rebinding, with
/// a short TTL) can slip past. Address rules are therefore a strong guard for literal addresses
/// and for names whose DNS the attacker does not control, not for hostile names; list those
/// names (or their domains) in `denied_hosts`, or use `allowed_hosts`.
public final class HostGuard: Sendable {
    private let current: Mutex<HostPolicy>

    public init(_ policy: HostPolicy = HostPolicy()) {
        current = Mutex(policy)
    }

    public var policy: HostPolicy { current.withLock { $0 } }

    public func replace(with policy: HostPolicy) {
        current.withLock { $0 = policy }
    }

    /// The outcome of a check.
    public enum Verdict: Sendable, Equatable {
        case allowed
        /// The policy refuses the host; the message names the rule and the fix.
        case refused(String)
        /// The policy needs the host's addresses and the name does not resolve now.
        case unresolved(String)
    }

    /// Checks `url`'s host, resolving it when the policy needs its addresses. Blocks while the
    /// resolver works: call it off the engine's delegate queue and off Swift concurrency threads.
    public func verdict(for url: URL) -> Verdict {
        let policy = self.policy
        guard let raw = url.host(percentEncoded: false), !raw.isEmpty else { return .refused("the URL has no host") }
        let host = HostPolicy.normalize(host: raw)
        var addresses: [IPAddress] = []
        if let literal = IPAddress(host) {
            addresses = [literal]
        } else if policy.needsAddresses(forHost: host) {
            // A name that a rule denies needs no lookup.
            if policy.denied.contains(where: { $0.matches(host: host) }), let refusal = policy.refusal(host: host, addresses: []) {
                return .refused(refusal)
            }
            switch HostResolver.addresses(of: host) {
            case .success(let resolved):
                addresses = resolved
            case .failure(let failure):
                return .unresolved("cannot resolve \(host) (\(failure.reason)): check the host name and this machine's DNS settings")
            }
        }
        return policy.refusal(host: host, addresses: addresses).map(Verdict.refused) ?? .allowed
    }

    /// Whether checking `url` resolves its host name (and so may block).
    func needsLookup(_ url: URL) -> Bool {
        guard let raw = url.host(percentEncoded: false) else { return false }
        let host = HostPolicy.normalize(host: raw)
        return IPAddress(host) == nil && policy.needsAddresses(forHost: host)
    }

    /// The check at submit, run off the caller's thread: refuses what the policy denies. A name
    /// that does not resolve now is accepted, since each attempt checks again before it connects.
    public func admit(_ url: URL) async throws(CoreError) {
        let verdict: Verdict
        if needsLookup(url) {
            verdict = await withCheckedContinuation { (continuation: CheckedContinuation<Verdict, Never>) in
                DispatchQueue.global().async { continuation.resume(returning: self.verdict(for: url)) }
            }
        } else {
            verdict = self.verdict(for: url)
        }
        if case .refused(let message) = verdict {
            throw CoreError(.hostNotAllowed, "\(Redaction.url(url)) cannot be fetched: \(message)")
        }
    }
}
