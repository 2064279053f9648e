#if canImport(Glibc)
import Glibc
#endif

/// Nanoseconds on the monotonic clock: cheap enough for the per-chunk path (a vDSO call).
public enum MonotonicClock {
    public static func nanoseconds() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
    }

    /// Seconds from `start` to `end`, 0 when `end` is not later: a time read on one thread may be
    /// behind one stored by another, and a wrapped difference would become a huge duration.
    public static func seconds(from start: UInt64, to end: UInt64) -> Double {
        end > start ? Double(end - start) / 1e9 : 0
    }
}
