import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// While transferctl waits for jobs, turns Ctrl-C into a note that only the waiting stopped:
/// the jobs go on in the daemon. Exits 130, as an interrupted command does.
final class InterruptNotice {
    private let source: any DispatchSourceSignal

    init(jobIDs: [String], clearLines: Bool) {
        let note: String
        if jobIDs.count == 1, let id = jobIDs.first {
            note = "transferctl: stopped waiting; job \(id) continues in transferd "
                + "(`transferctl status \(id)` to follow it, `transferctl cancel \(id)` to stop it)\n"
        } else {
            note = "transferctl: stopped waiting; the jobs continue in transferd "
                + "(`transferctl wait \(jobIDs.joined(separator: " "))` to follow them again)\n"
        }
        let prefix = clearLines ? "\r\u{1B}[J" : ""
        signal(SIGINT, SIG_IGN)
        source = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
        source.setEventHandler {
            StandardError.write(prefix + note)
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
