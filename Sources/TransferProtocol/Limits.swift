/// Framing limits shared by the daemon and its clients.
public enum Limits {
    /// The longest request line the daemon reads, newline excluded (1 MiB).
    public static let maxRequestLineBytes = 1 << 20
    /// How deeply a request may nest JSON arrays and objects by default; the request object
    /// itself is the first level.
    public static let maxJSONDepth = 32
    /// The most calls one JSON-RPC batch (a request line holding an array) may carry; the line
    /// itself stays within the request line limit.
    public static let maxBatchCalls = 10_000
    /// Longest client-chosen job id (and session name).
    public static let maxJobIDLength = 128
    /// The most ids one `pause` or `resume` may name.
    public static let maxJobsPerSelection = 10_000

    /// Whether `name` may be a client-chosen job id or a session name: 1 to `maxJobIDLength`
    /// characters of `A-Z a-z 0-9 . _ -`, and not `.` or `..`.
    public static func isValidName(_ name: String) -> Bool {
        (1...maxJobIDLength).contains(name.utf8.count) && name != "." && name != ".."
            && name.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
                    return true
                default:
                    return false
                }
            }
    }

    /// The ranges of a job's numbers, checked when it is submitted and again when the journal is
    /// replayed; documented in docs/protocol.md. Anything handed to FoundationNetworking or libcurl
    /// stays far inside what they can represent (libcurl's timers are whole milliseconds in an Int).
    public enum Job {
        /// `retry.max_attempts`.
        public static let maxAttempts: ClosedRange<Int> = 1...1_000_000
        /// `retry.max_time_seconds`: up to ten years.
        public static let maxTimeSeconds: ClosedRange<Double> = 1...315_360_000
        /// `retry.idle_timeout_seconds`: up to a day.
        public static let idleTimeoutSeconds: ClosedRange<Double> = 1...86_400
        /// `retry.low_speed_bytes_per_second` (0 turns the check off): up to 1 TiB/s.
        public static let lowSpeedBytesPerSecond: ClosedRange<Int64> = 0...(1 << 40)
        /// `retry.low_speed_seconds`: up to a day.
        public static let lowSpeedSeconds: ClosedRange<Double> = 1...86_400
        /// `segments`: connections fetching one file's ranges at once (aria2 allows up to 16 per server).
        public static let segments: ClosedRange<Int> = 1...16
        /// `size`: up to 1 EiB.
        public static let size: ClosedRange<Int64> = 0...(1 << 60)
        /// An event sequence number (`ack`'s `seq`): numbers stay below 2^62.
        public static let sequence: ClosedRange<UInt64> = 0...(1 << 62)
    }
}
