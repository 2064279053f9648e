/// Durations for people, to two units: `45s`, `3m05s`, `1h02m`, `2d03h`.
enum DurationFormatting {
    /// `seconds` (negative counts as zero) in its two largest units.
    static func string(seconds: Int64) -> String {
        let seconds = max(0, seconds)
        switch seconds {
        case ..<60:
            return "\(seconds)s"
        case ..<3600:
            return "\(seconds / 60)m\(twoDigits(seconds % 60))s"
        case ..<86400:
            return "\(seconds / 3600)h\(twoDigits(seconds % 3600 / 60))m"
        default:
            return "\(seconds / 86400)d\(twoDigits(seconds % 86400 / 3600))h"
        }
    }

    /// A time interval rounded to whole seconds; nil when it is not a finite number.
    static func string(interval: Double) -> String? {
        guard interval.isFinite, abs(interval) < Double(Int64.max / 2) else { return nil }
        return string(seconds: Int64(interval.rounded()))
    }

    private static func twoDigits(_ value: Int64) -> String {
        value < 10 ? "0\(value)" : "\(value)"
    }
}
