import Foundation
import Logging
import ServiceLifecycle
import TransferCore
import TransferProtocol
#if canImport(Glibc)
import Glibc
#endif

/// Runs the configured hooks when jobs of their sessions end: the job as JSON on stdin, its id,
/// state and destination in the environment. A run that does not exit 0 is retried with back-off
/// until it does; the job's record says whether its hooks are still due, so a restart picks up
/// where the daemon stopped (a hook may then run once more: hooks should be idempotent).
struct HookRunner: Service {
    let manager: TransferManager
    let configuration: LiveConfiguration
    let logger: Logger

    /// Which finished jobs have hooks, by the configuration in effect when they end.
    static func selector(_ configuration: LiveConfiguration) -> @Sendable (Job) -> Bool {
        { job in configuration.current.hooks.contains { $0.matches(job) } }
    }

    func run() async throws {
        let (pending, subscription) = await manager.subscribeToHooks(Self.selector(configuration))
        // Discarding: a long-running group must not keep the results of finished runs.
        await withDiscardingTaskGroup { group in
            // A job ends once, so a live end can repeat only a job that was pending at the start.
            let started = Set(pending.map(\.ownedID))
            for job in pending {
                group.addTask { await runHooks(for: job) }
            }
            await withGracefulShutdownHandler {
                while let item = await subscription.next() {
                    guard case .event(let event) = item, !started.contains(event.job.ownedID) else { continue }
                    group.addTask { await runHooks(for: event.job) }
                }
            } onGracefulShutdown: {
                subscription.end(.cancelled)
            }
            subscription.end(.cancelled)
            group.cancelAll()
        }
    }

    /// Runs every hook that matches `job` until each has exited 0, then marks the job's hooks done.
    private func runHooks(for job: Job) async {
        var logger = self.logger
        logger[metadataKey: "job"] = "\(job.id)"
        for hook in configuration.current.hooks where hook.matches(job) {
            var failures = 0
            while true {
                guard !Task.isCancelled, await manager.hookIsPending(jobID: job.ownedID) else { return }
                let status = await HookProcess.run(hook, job: job, logger: logger)
                if status == 0 { break }
                failures += 1
                let delay = min(hook.retryMaxDelaySeconds, hook.retryInitialDelaySeconds * pow(2, Double(failures - 1)))
                logger.warning(
                    "hook failed; it runs again later",
                    metadata: ["hook": "\(hook.name)", "exit_status": "\(status)", "failures": "\(failures)",
                        "retry_in_seconds": "\(delay)"])
                do { try await Task.sleep(for: .milliseconds(Int64(delay * 1000))) } catch { return }
            }
            logger.info("hook succeeded", metadata: ["hook": "\(hook.name)"])
        }
        await manager.hookFinished(jobID: job.ownedID)
    }
}

/// One run of a hook's command.
enum HookProcess {
    /// Runs the hook for `job` and returns its exit status (or -1 when it could not start, the
    /// signal number plus 128 when a signal ended it).
    static func run(_ hook: HookConfiguration, job: Job, logger: Logger) async -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: hook.command[0])
        process.arguments = Array(hook.command.dropFirst())
        process.currentDirectoryURL = URL(fileURLWithPath: "/")
        process.environment = environment(for: job, hook: hook)
        // Its output joins the daemon's log (the journal, under systemd).
        process.standardOutput = FileHandle.standardError
        process.standardError = FileHandle.standardError
        let input = Pipe()
        process.standardInput = input
        let exited = AsyncStream.makeStream(of: Int32.self)
        process.terminationHandler = { finished in
            let status = finished.terminationReason == .uncaughtSignal ? 128 + finished.terminationStatus : finished.terminationStatus
            exited.continuation.yield(status)
            exited.continuation.finish()
        }
        do {
            try process.run()
        } catch {
            logger.error("cannot start hook", metadata: ["hook": "\(hook.name)", "command": "\(hook.command[0])", "error": "\(error)"])
            return -1
        }
        let line = ((try? WireCoding.encode(job)) ?? Data()) + Data("\n".utf8)
        let writer = input.fileHandleForWriting
        // A hook that does not read its input must not block the daemon: write from elsewhere,
        // and a closed pipe is just an error here (SIGPIPE is ignored by the daemon).
        DispatchQueue.global().async {
            try? writer.write(contentsOf: line)
            try? writer.close()
        }
        let timeout = Task {
            try await Task.sleep(for: .milliseconds(Int64(hook.timeoutSeconds * 1000)))
            logger.warning("hook ran too long; killing it", metadata: ["hook": "\(hook.name)", "timeout_seconds": "\(hook.timeoutSeconds)"])
            process.terminate()
            try await Task.sleep(for: .seconds(5))
            kill(process.processIdentifier, SIGKILL)
        }
        defer { timeout.cancel() }
        for await status in exited.stream { return status }
        return -1
    }

    /// A small, fixed environment: nothing of the daemon's own (sockets, credentials) leaks in.
    static func environment(for job: Job, hook: HookConfiguration) -> [String: String] {
        var environment = [
            "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            "TRANSFER_JOB_ID": job.id,
            "TRANSFER_STATE": job.state.rawValue,
            "TRANSFER_DESTINATION": job.destination,
            "TRANSFER_URL": job.url,
            "TRANSFER_OWNER_UID": String(job.owner),
            "TRANSFER_HOOK": hook.name,
        ]
        if let session = job.session { environment["TRANSFER_SESSION"] = session }
        if let sha256 = job.sha256 { environment["TRANSFER_SHA256"] = sha256 }
        if let error = job.error {
            environment["TRANSFER_ERROR_CODE"] = error.rawCode
            environment["TRANSFER_ERROR"] = error.message
        }
        for key in ["LANG", "TZ"] {
            if let value = ProcessInfo.processInfo.environment[key] { environment[key] = value }
        }
        return environment
    }
}
