#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What transferctl needs to know about the terminal it draws on.
enum Terminal {
    /// Whether `descriptor` is a terminal.
    static func isTerminal(_ descriptor: Int32) -> Bool {
        isatty(descriptor) != 0
    }

    /// The width of the terminal at `descriptor`, or 80 when it cannot be told.
    static func columns(_ descriptor: Int32) -> Int {
        var size = winsize()
        #if canImport(Glibc)
        let result = ioctl(descriptor, UInt(TIOCGWINSZ), &size)
        #else
        let result = ioctl(descriptor, TIOCGWINSZ, &size)
        #endif
        guard result == 0, size.ws_col > 0 else { return 80 }
        return Int(size.ws_col)
    }
}
