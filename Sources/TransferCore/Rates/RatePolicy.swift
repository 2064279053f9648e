public import Foundation

/// The daemon's bandwidth limits: a global limit shared by all transfers, a limit shared by the
/// background class, and time windows that replace both while they hold.
public struct RatePolicy: Sendable, Equatable {
    /// Bytes per second all transfers share; nil: no limit.
    public var maxRate: Int64?
    /// Bytes per second the background class shares; nil: no limit of its own.
    public var backgroundMaxRate: Int64?
    /// A window that holds the current local time sets the limits instead; when several hold, the
    /// one with the lowest `max_rate`.
    public var windows: [RateWindow]

    public init(maxRate: Int64? = nil, backgroundMaxRate: Int64? = nil, windows: [RateWindow] = []) {
        self.maxRate = maxRate
        self.backgroundMaxRate = backgroundMaxRate
        self.windows = windows
    }

    /// The limits in force on `weekday` (1 Sunday … 7 Saturday, as `Calendar` counts) at
    /// `minute` past midnight, and the index of the window that set them (nil: none held).
    public func limits(weekday: Int, minute: Int) -> ActiveRateLimits {
        let holding = windows.indices.filter { windows[$0].holds(weekday: weekday, minute: minute) }
        guard let index = holding.min(by: { (windows[$0].maxRate ?? .max) < (windows[$1].maxRate ?? .max) }) else {
            return ActiveRateLimits(global: maxRate, background: backgroundMaxRate, window: nil)
        }
        let window = windows[index]
        return ActiveRateLimits(global: window.maxRate, background: window.backgroundMaxRate ?? backgroundMaxRate, window: index)
    }

    /// The limits in force at `date` in the daemon's local time zone.
    public func limits(at date: Date, calendar: Calendar = RatePolicy.localCalendar) -> ActiveRateLimits {
        if windows.isEmpty { return ActiveRateLimits(global: maxRate, background: backgroundMaxRate, window: nil) }
        let parts = calendar.dateComponents([.weekday, .hour, .minute], from: date)
        return limits(weekday: parts.weekday ?? 1, minute: (parts.hour ?? 0) * 60 + (parts.minute ?? 0))
    }

    /// The Gregorian calendar in the daemon's time zone (`TZ`, else the system's).
    public static var localCalendar: Calendar {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = .current
        return calendar
    }
}

/// The limits in force at one moment.
public struct ActiveRateLimits: Sendable, Equatable {
    public var global: Int64?
    public var background: Int64?
    /// The window that set them, by index in `RatePolicy.windows`; nil outside every window.
    public var window: Int?
}

/// One named entry of `rate_windows`: on `days`, from `from` until `to` (minutes past midnight, local
/// time), `maxRate` replaces the global limit. A window whose `to` is before its `from` runs past
/// midnight into the next day; `days` names the day it begins on.
public struct RateWindow: Sendable, Equatable {
    /// Its name in `rate_windows`.
    public var name: String
    /// Weekdays as `Calendar` counts them: 1 Sunday … 7 Saturday.
    public var days: Set<Int>
    public var from: Int
    public var to: Int
    /// Nil: no global limit while the window holds.
    public var maxRate: Int64?
    /// Nil: the top-level `background_max_rate` stays in force.
    public var backgroundMaxRate: Int64?

    public init(name: String = "", days: Set<Int>, from: Int, to: Int, maxRate: Int64?, backgroundMaxRate: Int64? = nil) {
        self.name = name
        self.days = days
        self.from = from
        self.to = to
        self.maxRate = maxRate
        self.backgroundMaxRate = backgroundMaxRate
    }

    public func holds(weekday: Int, minute: Int) -> Bool {
        if from <= to { return days.contains(weekday) && minute >= from && minute < to }
        let previous = weekday == 1 ? 7 : weekday - 1
        return (days.contains(weekday) && minute >= from) || (days.contains(previous) && minute < to)
    }
}
