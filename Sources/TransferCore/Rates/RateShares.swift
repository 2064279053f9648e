/// How a shared limit is split among the transfers it covers: equal shares, except that a transfer
/// held lower by its own limit leaves what it does not use to the others (water-filling).
enum RateShares {
    /// Splits `total` bytes per second (nil: no shared limit) among transfers whose own caps are
    /// `caps` (nil: uncapped); returns each one's rate, in the order of `caps`.
    static func fill(_ total: Int64?, caps: [Int64?]) -> [Int64?] {
        guard let total, !caps.isEmpty else { return caps }
        var rates = caps
        let order = caps.indices.sorted { (caps[$0] ?? .max) < (caps[$1] ?? .max) }
        var remaining = total
        var left = Int64(caps.count)
        for index in order {
            let fair = remaining / left
            if let cap = caps[index], cap < fair {
                rates[index] = cap
                remaining -= cap
            } else {
                rates[index] = max(fair, 1)
                remaining -= fair
            }
            left -= 1
        }
        return rates
    }
}
