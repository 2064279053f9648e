import Foundation
import TransferProtocol

/// What the core keeps in memory of a download that has waited in the queue, untouched, since
/// start-up or since its submit wrote its record: what scheduling, lists and the per-owner counts
/// need (its class, position, host, owner, destination, whether it is paused; its host is in the
/// queue's entry). Its whole record stays in the journal and is read when the job starts or
/// anything else asks for it (`JobTable`'s subscript), as a finished job's is. So a daemon handed,
/// or restarted with, a million queued URLs neither decodes nor holds a million records.
///
/// Its members are laid out so that it takes 88 bytes (the job table holds one per queued job).
struct QueuedJob: Sendable, Equatable {
    /// Order, creation time, owner, state (`queued`), session, and the journal bytes it holds.
    var summary: FinishedJob
    var priority: JobPriority
    var paused: Bool
    var destination: String
    /// `position`, without the room an optional takes (`Int64.min`: none; a record holding that
    /// position is not held light).
    private var positionOrMin: Int64

    /// Where `move` put it within its class; nil: by submission order.
    var position: Int64? { positionOrMin == .min ? nil : positionOrMin }

    /// Nil when `position` is `Int64.min`, which only the whole record can hold.
    init?(summary: FinishedJob, destination: String, priority: JobPriority, position: Int64?, paused: Bool) {
        guard position != .min else { return nil }
        self.summary = summary
        self.priority = priority
        self.paused = paused
        self.destination = destination
        self.positionOrMin = position ?? .min
    }

    /// Its position within its class, as `JobRecord.queuePosition`.
    var queuePosition: Int64 { JobRecord.queuePosition(position, order: summary.order) }

    /// The host of a plain `http://` or `https://` URL, lowercased, read from its text: a name or
    /// an IPv4 address of unreserved characters, after any user information and before any port.
    /// Nil for anything else (percent-encoding, IPv6, characters a URL cannot hold unescaped,
    /// another scheme): the caller decodes the record and parses its URL then.
    static func host(ofURL url: String) -> String? {
        var url = url
        return url.withUTF8 { bytes -> String? in
            let scheme: Int
            if bytes.starts(with: "http://".utf8) {
                scheme = 7
            } else if bytes.starts(with: "https://".utf8) {
                scheme = 8
            } else {
                return nil
            }
            // Every byte of the URL is one it may hold unescaped.
            guard bytes.allSatisfy(isURLByte) else { return nil }
            let rest = bytes[scheme...]
            var authority = rest.prefix { $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: "?") && $0 != UInt8(ascii: "#") }
            if let at = authority.lastIndex(of: UInt8(ascii: "@")) { authority = authority[(at + 1)...] }
            let host = authority.prefix { $0 != UInt8(ascii: ":") }
            guard !host.isEmpty, host.allSatisfy(isNameByte) else { return nil }
            // Lowercased as it is read: most hosts are lowercase already.
            return String(unsafeUninitializedCapacity: host.count) { buffer in
                for (offset, byte) in host.enumerated() {
                    buffer[offset] = byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte + 32 : byte
                }
                return host.count
            }
        }
    }

    private static func isNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "."), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "~"):
            true
        default:
            false
        }
    }

    /// RFC 3986's unreserved, reserved and `%` characters.
    private static func isURLByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "%"), UInt8(ascii: ":"), UInt8(ascii: "/"), UInt8(ascii: "?"), UInt8(ascii: "#"), UInt8(ascii: "["),
            UInt8(ascii: "]"), UInt8(ascii: "@"), UInt8(ascii: "!"), UInt8(ascii: "$"), UInt8(ascii: "&"), UInt8(ascii: "'"),
            UInt8(ascii: "("), UInt8(ascii: ")"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: ","), UInt8(ascii: ";"),
            UInt8(ascii: "="):
            true
        default:
            isNameByte(byte)
        }
    }
}
