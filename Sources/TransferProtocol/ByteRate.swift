/// A transfer rate in bytes per second, spelled as curl's `--limit-rate` spells it: a number with
/// an optional `K`, `M` or `G` suffix (powers of 1024), e.g. `500K`, `2M`, `1.5G`, `1048576`.
/// `limit_rate`, `max_rate`, `background_max_rate` and `transferctl --limit-rate` all take it.
public enum ByteRate {
    /// The slowest rate a limit may ask for: a paced segment is at least 16 KiB, so slower rates
    /// would leave minutes between requests.
    public static let minimum: Int64 = 1024
    /// The fastest rate a limit may name (1 TiB/s): beyond it a limit means nothing.
    public static let maximum: Int64 = 1 << 40

    /// The rate `text` names in bytes per second, or nil when it is not a rate. `0` is a rate (no limit).
    public static func parse(_ text: String) -> Int64? {
        var digits = Substring(text)
        var multiplier: Double = 1
        switch digits.last {
        case "k", "K": multiplier = 1024
        case "m", "M": multiplier = 1024 * 1024
        case "g", "G": multiplier = 1024 * 1024 * 1024
        default: break
        }
        if multiplier > 1 { digits = digits.dropLast() }
        guard !digits.isEmpty, digits.count <= 20, digits.allSatisfy({ ("0"..."9").contains($0) || $0 == "." }),
            digits.first != ".", let value = Double(digits), value.isFinite
        else { return nil }
        let bytes = (value * multiplier).rounded()
        guard bytes <= Double(maximum) else { return nil }
        return Int64(bytes)
    }

    /// Why `text`, given as `name`, is refused, and what to give instead.
    public static func problem(_ name: String, _ text: String) -> String? {
        guard let rate = parse(text) else {
            return "\(name) '\(text.prefix(40))' is not a rate: give bytes per second with an optional K, M or G suffix, e.g. 2M"
        }
        if rate != 0, rate < minimum {
            return "\(name) '\(text.prefix(40))' is below the slowest limit of 1K (1024 bytes per second): give at least 1K, or 0 for no limit"
        }
        return nil
    }

    /// The limit `text` asks for: nil for no limit (`0`), else bytes per second. Call `problem` first.
    public static func limit(_ text: String) -> Int64? {
        guard let rate = parse(text), rate > 0 else { return nil }
        return rate
    }
}
