/// Byte counts in binary units for people: `512 B`, `1.5 GiB`, `12.3 MiB/s`. transferctl shows
/// sizes and rates with it, the daemon its rate in systemd's STATUS.
package enum ByteCountFormatting {
    private static let units = ["KiB", "MiB", "GiB", "TiB"]

    /// `bytes` in the largest unit up to TiB that keeps the value below 1024, with one decimal.
    package static func string(_ bytes: Int64) -> String {
        if bytes < 1024 { return "\(bytes) B" }
        var value = Double(bytes)
        var unit = -1
        var tenths: Double
        repeat {
            value /= 1024
            unit += 1
            tenths = (value * 10).rounded()
        } while tenths >= 10240 && unit < units.count - 1
        let whole = Int64(tenths)
        return "\(whole / 10).\(whole % 10) \(units[unit])"
    }

    /// A transfer rate, e.g. `12.3 MiB/s`.
    package static func rate(_ bytesPerSecond: Int64) -> String {
        string(bytesPerSecond) + "/s"
    }
}
