/// Framing limits shared by the daemon and its clients.
public enum Limits {
    /// The longest request line the daemon reads, newline excluded (1 MiB).
    public static let maxRequestLineBytes = 1 << 20
    /// How deeply a request may nest JSON arrays and objects by default; the request object
    /// itself is the first level.
    public static let maxJSONDepth = 32
    /// Longest client-chosen job id.
    public static let maxJobIDLength = 128
}
