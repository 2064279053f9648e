import Foundation
package import TransferCore
import TransferProtocol

extension DaemonConfiguration {
    /// The bandwidth limits these settings ask for.
    package var ratePolicy: RatePolicy {
        RatePolicy(maxRate: maxRate, backgroundMaxRate: backgroundMaxRate, windows: rateWindows)
    }

    /// A rate setting written as curl's `--limit-rate` spells it (`"4M"`, `"500K"`) or as a number of
    /// bytes per second; nil for `0` (no limit). `source` names where it came from, for the message.
    static func rate(_ value: Any, key: String, source: String) throws -> Int64? {
        let text: String
        if let string = value as? String {
            text = string
        } else if let number = value as? NSNumber, let whole = Int64(exactly: number.doubleValue) {
            text = String(whole)
        } else {
            text = "\(value)"
        }
        if let problem = ByteRate.problem(key, text) {
            throw ConfigurationError(description: "\(problem) (in \(source))")
        }
        return ByteRate.limit(text)
    }

    /// Reads `rate_windows` of the configuration file (empty when absent): an object of named
    /// windows, as `hooks` is (the configuration reader takes no arrays of objects).
    static func parseRateWindows(_ value: Any?, file: String) throws -> [RateWindow] {
        guard let value else { return [] }
        let example = #""rate_windows": {"office-hours": {"days": "mon-fri", "from": "08:00", "to": "18:00", "max_rate": "5M"}}"#
        let entries = try NamedEntry.parse(
            value, key: "rate_windows", file: file, shape: "an object of named windows, e.g. \(example)",
            entryShape: "must be an object with from, to and max_rate, e.g. \(example)",
            fields: ["days", "from", "to", "max_rate", "background_max_rate"])
        return try entries.map { item in
            let (name, entry, problem) = (item.name, item.fields, item.problem)
            let days: Set<Int>
            if let text = entry["days"] {
                guard let text = text as? String, let parsed = weekdays(text) else {
                    throw problem("days must name weekdays as mon, tue, wed, thu, fri, sat, sun, with ranges and commas, e.g. \"mon-fri\" or \"sat,sun\"")
                }
                days = parsed
            } else {
                days = Set(1...7)
            }
            guard let fromText = entry["from"] as? String, let from = minuteOfDay(fromText, allowing24: false) else {
                throw problem("from must be a time of day as HH:MM, e.g. \"08:00\"")
            }
            guard let toText = entry["to"] as? String, let to = minuteOfDay(toText, allowing24: true) else {
                throw problem("to must be a time of day as HH:MM (24:00 for midnight at the end of the day), e.g. \"18:00\"")
            }
            guard from != to else { throw problem("from and to are both \(fromText): the window would hold no time; give different times") }
            guard let maxRate = entry["max_rate"] else {
                throw problem("max_rate must give the global limit while the window holds, e.g. \"5M\" (0: no limit)")
            }
            let source = "rate_windows.\(name) of \(file)"
            return RateWindow(
                name: name, days: days, from: from, to: to, maxRate: try rate(maxRate, key: "max_rate", source: source),
                backgroundMaxRate: try entry["background_max_rate"].flatMap { try rate($0, key: "background_max_rate", source: source) })
        }
    }

    /// `mon-fri`, `sat,sun`, `mon,wed-fri`, `*`: weekdays as `Calendar` counts them (1 Sunday … 7 Saturday).
    static func weekdays(_ text: String) -> Set<Int>? {
        let names = ["mon": 2, "tue": 3, "wed": 4, "thu": 5, "fri": 6, "sat": 7, "sun": 1]
        let order = [2, 3, 4, 5, 6, 7, 1]
        if text.trimmingCharacters(in: .whitespaces) == "*" { return Set(1...7) }
        var days: Set<Int> = []
        for part in text.lowercased().split(separator: ",", omittingEmptySubsequences: false) {
            let bounds = part.split(separator: "-", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            guard (1...2).contains(bounds.count), let first = names[bounds[0]], let last = names[bounds[bounds.count - 1]],
                let start = order.firstIndex(of: first), let end = order.firstIndex(of: last)
            else { return nil }
            var index = start
            while true {
                days.insert(order[index])
                if index == end { break }
                index = (index + 1) % order.count
            }
        }
        return days.isEmpty ? nil : days
    }

    /// `HH:MM` as minutes past midnight; `24:00` only when `allowing24`.
    static func minuteOfDay(_ text: String, allowing24: Bool) -> Int? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].count == 2, parts[1].count == 2, let hour = Int(parts[0]), let minute = Int(parts[1]),
            (0...59).contains(minute)
        else { return nil }
        if hour == 24, minute == 0, allowing24 { return 24 * 60 }
        guard (0...23).contains(hour) else { return nil }
        return hour * 60 + minute
    }
}
