import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// While `submit --wait` waits, turns Ctrl-C into a note that only the waiting stopped:
/// the job goes on in the daemon. Exits 130, as an interrupted command does.
final class InterruptNotice {
    private let source: any DispatchSourceSignal

    init(jobID: String, clearLine: Bool) {
        let note = (clearLine ? "\r\u{1B}[K" : "")
            + "transferctl: stopped waiting; job \(jobID) continues in transferd "
            + "(`transferctl status \(jobID)` to follow it, `transferctl cancel \(jobID)` to stop it)\n"
        signal(SIGINT, SIG_IGN)
        source = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
        source.setEventHandler {
            StandardError.write(note)
            exit(130)
        }
        source.resume()
    }

    /// Gives Ctrl-C back its default meaning.
    func cancel() {
        source.cancel()
        signal(SIGINT, SIG_DFL)
    }
}
