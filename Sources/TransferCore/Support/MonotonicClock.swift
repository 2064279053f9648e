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
}
