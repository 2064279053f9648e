import Synchronization

extension DownloadContext {
    /// Who ends a running download, taken once and from any thread: the core, with a cancel or a
    /// stop (which then reaches the machine as an input on the delegate queue), or the transfer
    /// itself, landing its file or failing. A cancel or stop answers at once from it: a transfer
    /// already landing completes, one already ending ends as it was.
    final class EndClaim: Sendable {
        enum Holder: UInt8, Sendable {
            /// Nobody yet: the transfer runs.
            case open
            /// The transfer lands its file (or leaves an unchanged one): it can no longer be cancelled.
            case landing
            /// The transfer ends by its own answer: interrupted or failed.
            case own
            /// The core cancelled it.
            case cancel
            /// The core stopped it (a pause, a yield, shutdown).
            case stop
        }

        private let holder = Atomic<UInt8>(Holder.open.rawValue)

        /// Takes the end for `claimant` unless someone holds it; returns who held it before
        /// (`.open`: `claimant` has it now).
        func take(_ claimant: Holder) -> Holder {
            let (exchanged, original) = holder.compareExchange(
                expected: Holder.open.rawValue, desired: claimant.rawValue, ordering: .acquiringAndReleasing)
            return exchanged ? .open : Holder(rawValue: original) ?? .own
        }
    }
}

extension DownloadContext.EndClaim.Holder {
    /// What a cancel answers when the end was held by this (`.open`: the cancel took it).
    var cancelOutcome: CancelOutcome {
        switch self {
        case .open, .cancel: .cancelled
        case .landing: .landing
        case .own, .stop: .notRunning
        }
    }

    /// What a stop answers when the end was held by this (`.open`: the stop took it).
    var stopOutcome: StopOutcome {
        switch self {
        case .open: .stopping
        case .landing: .landing
        case .own, .cancel, .stop: .notRunning
        }
    }
}
