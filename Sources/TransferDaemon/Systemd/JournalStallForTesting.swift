import Foundation
import TransferCore
#if canImport(Glibc)
import Glibc
#endif

/// Test-only (`TRANSFERD_TEST_JOURNAL_STALL_FILE`): while the named file exists, the journal's
/// writer blocks, as it would on a disk whose writes hang. The watchdog tests use it to show that a
/// daemon whose journal hangs stops pinging. Never set it in production.
enum JournalStallForTesting {
    static func start(journal: Journal, whileFileExists path: String) {
        Task.detached {
            while true {
                if access(path, F_OK) == 0 {
                    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                        journal.stallWriterForTesting {
                            while access(path, F_OK) == 0 { usleep(10_000) }
                            continuation.resume()
                        }
                    }
                }
                try? await Task.sleep(for: .milliseconds(10))
            }
        }
    }
}
