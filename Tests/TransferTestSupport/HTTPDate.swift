/// Formats IMF-fixdate HTTP dates (`Sun, 06 Nov 1994 08:49:37 GMT`) without Foundation.
enum HTTPDate {
    private static let weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// The HTTP date of `seconds` since 1970-01-01T00:00:00Z (not before 1970).
    static func format(unixSeconds seconds: Int64) -> String {
        let seconds = max(0, seconds)
        let days = seconds / 86_400
        let secondOfDay = seconds % 86_400
        let (year, month, day) = civil(fromDays: days)
        let weekday = weekdays[Int((days + 4) % 7)]
        return "\(weekday), \(pad(day)) \(months[Int(month - 1)]) \(year) "
            + "\(pad(secondOfDay / 3600)):\(pad(secondOfDay / 60 % 60)):\(pad(secondOfDay % 60)) GMT"
    }

    private static func pad(_ value: Int64) -> String {
        value < 10 ? "0\(value)" : "\(value)"
    }

    /// Howard Hinnant's `civil_from_days`, for days >= 0.
    private static func civil(fromDays days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468
        let era = z / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return (year, month, day)
    }
}
