import Foundation
import Logging
import Synchronization
import TransferCore
import TransferProtocol

// libFuzzer target from the socket to the engine: the input is a request line, decoded as the
// daemon decodes it; a submit is validated and accepted by the real core (journal, scheduler)
// and reaches a scripted engine, which checks that what it was handed is safe to give
// FoundationNetworking and libcurl. A crash, a trap or a failed `check` is a finding; refusals
// are expected.
//
// To keep the search on what the core does with the request, the destination is replaced by a
// fresh path in the target's directory, and a host that is not an IP address by 127.0.0.1 (no
// name is looked up).

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSubmitToEngine(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let bytes = start.map { Data(UnsafeRawBufferPointer(start: $0, count: count)) } ?? Data()
    guard let request = try? RequestDecoder(methods: [Submit.name]).decode(bytes), request.method == Submit.name,
        var params = try? request.params(for: Submit.self)
    else { return 0 }
    params.destination = Harness.shared.nextDestination()
    // A start time ahead would start the job during a later input, and that input's leak check
    // would race the job's work (see `Harness.submit`).
    params.notBefore = nil
    if let url = URLComponents(string: params.url), let host = url.host, IPAddress(host) == nil {
        var local = url
        local.host = "127.0.0.1"
        params.url = local.string ?? "http://127.0.0.1/"
    }
    let done = DispatchSemaphore(value: 0)
    Task {
        await Harness.shared.submit(params)
        done.signal()
    }
    done.wait()
    return 0
}

/// The core, its journal in a temporary directory, and the scripted engine, made once.
final class Harness: Sendable {
    static let shared = Harness()

    let directory: String
    let manager: TransferManager
    let engine: ScriptedEngine
    private let counter = Atomic<Int>(0)

    init() {
        directory = NSTemporaryDirectory() + "fuzz-submit-\(getpid())"
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let logger = Logger(label: "fuzz", factory: { _ in SwiftLogNoOpLogHandler() })
        engine = ScriptedEngine()
        do {
            let journal = try Journal(directory: directory, logger: logger)
            var configuration = CoreConfiguration(maxJobsPerUser: 10_000_000, allowedRoots: AllowedRoots([directory]))
            configuration.diskReserveBytes = 0
            // Finished jobs are forgotten after each input, so memory stays flat however long it runs.
            configuration.finishedJobRetention = .zero
            configuration.eventRetention = .zero
            manager = try TransferManager(journal: journal, engine: engine, configuration: configuration, logger: logger)
        } catch {
            fatalError("the fuzz harness cannot start its core: \(error)")
        }
        let manager = manager
        Task { await manager.run() }
        Task { await manager.start() }
    }

    func nextDestination() -> String {
        "\(directory)/file-\(counter.add(1, ordering: .relaxed).newValue)"
    }

    func submit(_ params: Submit.Params) async {
        do {
            let job = try await manager.submit(params, owner: 0)
            check(job.state != .failed || job.error != nil, "a failed job without an error")
            await waitUntilEnded(job.id)
        } catch {
            check(!error.message.isEmpty, "a refusal without a message (\(error.kind))")
        }
        await manager.dropExpired(now: .distantFuture)
    }

    /// Returns once the core has handled the scripted engine's answer for job `id`, so that no
    /// work of this input runs on after it. libFuzzer checks for leaks at the end of each input,
    /// and LeakSanitizer cannot follow a Swift reference held with an enum's tag bits (as `Data`
    /// holds its storage) while another thread is in the middle of using it: work still running
    /// then is reported as a leak that is none.
    func waitUntilEnded(_ id: String) async {
        let deadline = ContinuousClock.now + .seconds(5)
        while ContinuousClock.now < deadline {
            guard let job = try? await manager.status(Status.Params(id: id), caller: 0).jobs.first else { return }
            if job.state != .queued && job.state != .running { return }
            await Task.yield()
        }
        check(false, "job \(id) neither ran nor ended within 5 s of its submit")
    }
}

/// An engine that checks each transfer it is handed, then ends it at once as failed.
final class ScriptedEngine: TransferDriving {
    let hosts = HostGuard(HostPolicy())
    let events: AsyncStream<EngineEvent>
    private let continuation: AsyncStream<EngineEvent>.Continuation

    init() {
        (events, continuation) = AsyncStream.makeStream(of: EngineEvent.self)
    }

    func start(_ request: TransferRequest) {
        let scheme = request.url.scheme?.lowercased()
        check(scheme == "http" || scheme == "https", "a \(scheme ?? "schemeless") URL reached the engine: \(request.url)")
        let limits = request.limits
        check(Limits.Job.idleTimeoutSeconds.contains(limits.idleTimeout), "idle timeout \(limits.idleTimeout) reached the engine")
        check(Limits.Job.maxTimeSeconds.contains(limits.maxTime), "maximum time \(limits.maxTime) reached the engine")
        check(Limits.Job.lowSpeedSeconds.contains(limits.lowSpeedTime), "low-speed time \(limits.lowSpeedTime) reached the engine")
        check(Limits.Job.lowSpeedBytesPerSecond.contains(limits.lowSpeedBytesPerSecond), "low-speed rate \(limits.lowSpeedBytesPerSecond)")
        check((1...1_000_000).contains(limits.maxAttempts), "max attempts \(limits.maxAttempts) reached the engine")
        // What FoundationNetworking does with the timeout: whole milliseconds in an Int.
        let milliseconds = Int(limits.idleTimeout.rounded(.up)).multipliedReportingOverflow(by: 1000)
        check(!milliseconds.overflow, "the idle timeout overflows libcurl's milliseconds")
        if let size = request.expectedSize { check(Limits.Job.size.contains(size), "expected size \(size) reached the engine") }
        for (name, value) in request.headers {
            check(!name.utf8.contains(where: { $0 < 0x21 || $0 == 0x7F }), "a header name with a control character or space")
            check(!value.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0 }), "a header value with CR, LF or NUL")
        }
        continuation.yield(.failed(jobID: request.jobID, error: JobError(code: .network, message: "scripted")))
    }

    func cancel(jobID: String) -> CancelOutcome { .notRunning }
    func stop(jobID: String, reason: StopReason) -> StopOutcome { .notRunning }
    func forget(jobID: String) {}
    func stopAll() async -> [String: StoppedTransfer] { [:] }
    func finishEvents() { continuation.finish() }
    func progress(jobID: String) -> TransferProgress? { nil }
}

/// Like `precondition`, in every build configuration.
func check(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String) {
    if !condition() {
        FileHandle.standardError.write(Data("finding: \(message())\n".utf8))
        abort()
    }
}


#if !FUZZING
/// Without the fuzzer (a plain `swift build`): runs the inputs named as arguments, for example
/// a crash file, through the same checks.
@main
enum ReplaySubmitInputs {
    static func main() {
        for path in CommandLine.arguments.dropFirst() {
            guard let data = FileManager.default.contents(atPath: path) else {
                print("cannot read \(path)")
                exit(2)
            }
            _ = [UInt8](data).withUnsafeBytes { fuzzSubmitToEngine($0.baseAddress, $0.count) }
            print("ok \(path)")
        }
    }
}
#endif
