import TransferProtocol

/// Where a download is, and the inputs that move it there: a cancel or a stop from the core, the
/// delegate queue's back-pressure, the transfer's own end. Requests and their answers are the
/// attempt's decisions (`DownloadAttempt`); this is what lies around them.
///
/// | state | cancel, stop | back-pressure | the attempt's own end | nothing left in flight |
/// |---|---|---|---|---|
/// | `fetching` | `closing`; cancel every request, wake a wait | `backedUp`; cancel the attempt's request | `ending` (granted) or `held` | — |
/// | `backedUp` | `closing`, as above | — | as `fetching` | `fetching` once drained |
/// | `closing` | nothing: the first stands | — | `ending`: finish as `closing` decided | `ending`: finish as it decided |
/// | `held` | `ending`: finish as the input says | — | — | — |
/// | `ending` | nothing | — | — | — |
extension DownloadMachine {
    enum State: Equatable, Sendable {
        /// A request is out, or the attempt waits between two (its pace, a helper's part, the
        /// host rules' verdict on a redirect, the delegate queue's backlog).
        case fetching
        /// Back-pressure, not a user's pause: the attempt's request was cancelled to let the
        /// delegate queue (and the disk) catch up; it continues with a ranged request once they have.
        case backedUp
        /// Cancelled or stopped by the core: every request is cancelled, and the transfer ends this
        /// way once nothing of the attempt is left in flight.
        case closing(Ending)
        /// The attempt came to its own end (it would land, fail or be interrupted) after the core
        /// had claimed the end: it waits for that cancel or stop, which is on its way to it.
        case held
        /// It ends by its own decision (landing, unchanged, interrupted, failed), or finished as
        /// `closing` decided: every later input is ignored.
        case ending

        /// Whether the transfer goes on: fetching, or held back until the backlog drains.
        var isUnderWay: Bool { self == .fetching || self == .backedUp }

        /// Whether bytes still arriving are written: not once the file is to be removed or landed.
        var keepsBytes: Bool {
            switch self {
            case .fetching, .backedUp, .closing(.stopped): true
            case .closing(.cancelled), .held, .ending: false
            }
        }
    }

    /// How a download ends that did not end by its own answers.
    enum Ending: Equatable, Sendable {
        /// Cancelled by the user: the partial file is removed.
        case cancelled
        /// Stopped by the core (a user's pause, a background job's yield, shutdown): the partial
        /// file is synced and kept.
        case stopped(StopReason)
    }

    /// What happens to the download, outside the attempt's requests and answers.
    enum Input: Equatable, Sendable {
        /// The user cancelled the job (the core claimed the end first: `DownloadContext.EndClaim`).
        case cancel
        /// The core stops the transfer (the core claimed the end first).
        case stop(StopReason)
        /// The delegate queue's backlog went over its high-water mark.
        case backlogHigh
        /// The backlog drained (or was never high): the attempt may send its next request.
        case drained
        /// The attempt's pending step (a request's end, a wait) came back and found the transfer
        /// no longer under way: nothing of it is in flight now.
        case settled
    }

    /// What the shell is to do.
    enum Action: Equatable, Sendable {
        /// Cancel every request (the attempt's and the helpers'), and end a wait between requests.
        case cancelRequests
        /// Cancel the attempt's request only: the helpers' bytes go to the disk directly.
        case cancelLeadRequest
        /// Send the attempt's next request (or reach the helpers' parts).
        case proceed
        /// End the transfer this way: remove the partial file, or sync and keep it.
        case finish(Ending)
    }

    /// What becomes of the attempt's own end (it would land, fail or be interrupted).
    enum OwnEnd: Equatable, Sendable {
        /// It ends so: it claimed the end before the core did.
        case granted
        /// The core claimed the end first: it waits, `held`, for that cancel or stop.
        case held
        /// A cancel or stop already closes it: it ends that way, now.
        case finish(Ending)
        /// It has ended already.
        case ignored
    }
}
