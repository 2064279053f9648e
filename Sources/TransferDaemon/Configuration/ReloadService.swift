import TransferCore
import ServiceLifecycle
import UnixSignals

/// Says READY=1 once the daemon runs, and on each SIGHUP reloads the configuration (see
/// `ConfigurationReloader`; the `reload` method does the same and answers when it is done).
///
/// READY=1 is sent from here, inside the service group, because by then the group's SIGTERM and
/// SIGINT handlers are installed, and SIGHUP's (`hangups`, created before the group) too: a stop
/// or reload requested right after READY=1 never meets a signal's default action.
struct ReloadService: Service {
    let hangups: UnixSignalsSequence
    let reloader: ConfigurationReloader
    let manager: TransferManager

    func run() async throws {
        SystemdNotifier.ready(status: await ManagerService.status(of: manager))
        for await _ in hangups.cancelOnGracefulShutdown() {
            // A failure is logged by the reloader; a signal has no one to answer.
            _ = try? await reloader.reload()
        }
    }
}
