import Foundation
import Testing
@testable import TransferCore
import TransferProtocol

/// An upload's machine, one input at a time: the host rules for a new origin, the pace of its
/// appends, and a stop, cancel or failure at each point of its life, ending it once.
@Suite("Upload machine: stops, failures, the host check and the pace")
struct UploadMachineTests {
    static let url = URL(string: "http://example.test/files")!
    static let resource = URL(string: "http://example.test/files/1")!
    static let elsewhere = URL(string: "http://other.test/files/1")!
    static let second: UInt64 = 1_000_000_000
    static let reasons: [StopReason] = [.pause, .yield, .cancel, .shutdown]
    static let tooSlow = TransferFailure.transient(JobError(code: .tooSlow, message: "too slow"))
    static let outOfTime = TransferFailure.permanent(JobError(code: .timeLimit, message: "out of time"))

    /// The phases a stop can meet.
    enum Phase: CaseIterable {
        case ready, checkingHost, reading, paced, requesting
    }

    static func clock(_ now: UInt64 = 0, rate: Int64? = nil) -> UploadMachine.Clock {
        UploadMachine.Clock(now: now, rate: rate)
    }

    /// A tus upload of 3,000 bytes in appends of 1,000, whose resource is already known.
    static func tus(resource: URL = resource) -> UploadMachine {
        var settings = UploadAttempt.Settings(url: url, size: 3000, bodyLimit: 64)
        settings.resumable = .tus
        settings.resource = resource
        settings.segmentBytes = 1000
        return UploadMachine(attempt: UploadAttempt(settings: settings))
    }

    static func offset(_ offset: Int64) -> UploadAttempt.Response {
        UploadAttempt.Response(status: 204, location: nil, etag: nil, contentType: nil, retryAfter: nil, uploadOffset: offset)
    }

    /// Through the offset request (the server holds `held` bytes) to the read of the next append.
    static func reading(held: Int64 = 1000, at now: UInt64 = 0, rate: Int64? = nil) -> UploadMachine {
        var machine = tus()
        guard case .send(let head, nil, 0)? = machine.handle(.start(clock(now, rate: rate))).first else {
            Issue.record("no offset request")
            return machine
        }
        #expect(head.method == "HEAD" && head.url == resource)
        #expect(machine.handle(.response(offset(held), Self.clock())) == [.acceptBody])
        #expect(
            machine.handle(.requestEnded(nil, clock(now, rate: rate)))
                == [.record(.tus, resource: resource, offset: held), .read(held..<(held + 1000))])
        return machine
    }

    /// An append in flight from `held`.
    static func appending(held: Int64 = 1000, at now: UInt64 = 0, rate: Int64? = nil) -> UploadMachine {
        var machine = reading(held: held, at: now, rate: rate)
        let actions = machine.handle(.segmentRead(.success(Data(count: 1000))))
        guard case .send(let patch, let body, let base)? = actions.first, actions.count == 1 else {
            Issue.record("no append: \(actions)")
            return machine
        }
        #expect(patch.method == "PATCH" && body?.count == 1000 && base == held)
        #expect(machine.state == .requesting)
        return machine
    }

    /// Waiting for the pace of its second append: 1,000 bytes at 1,000 bytes/s.
    static func paced() -> UploadMachine {
        var machine = appending(held: 0, at: second, rate: 1000)
        #expect(machine.handle(.response(offset(1000), Self.clock())) == [.acceptBody])
        let actions = machine.handle(.requestEnded(nil, clock(second + second / 10, rate: 1000)))
        #expect(actions == [.record(.tus, resource: resource, offset: 1000), .wake(at: 2 * second)])
        return machine
    }

    static func machine(in phase: Phase) -> UploadMachine {
        switch phase {
        case .ready:
            return tus()
        case .checkingHost:
            var machine = tus(resource: elsewhere)
            #expect(machine.handle(.start(clock())) == [.checkHost(elsewhere)])
            return machine
        case .reading:
            return reading()
        case .paced:
            return paced()
        case .requesting:
            return appending()
        }
    }

    static func input(_ reason: StopReason) -> UploadMachine.Input {
        reason == .cancel ? .cancel : .stop(reason)
    }

    // MARK: - Stops

    @Test(arguments: Phase.allCases, reasons)
    func aStopEndsTheUploadOnceWithItsReason(phase: Phase, reason: StopReason) {
        var machine = Self.machine(in: phase)
        // What the server reported holding: nothing before the offset request's answer.
        let kept: Int64 = phase == .ready || phase == .checkingHost ? 0 : 1000
        if phase == .requesting {
            // The request in flight is cancelled; its end is the upload's.
            #expect(machine.handle(Self.input(reason)) == [.cancelRequest])
            #expect(machine.state == .closing(.stopped(reason)) && !machine.isRunning)
            #expect(machine.handle(.requestEnded(.transient(JobError(code: .network, message: "cancelled")), Self.clock())) == [.stopped(reason, kept: kept)])
        } else {
            // Between requests nothing is in flight: it ends at once.
            #expect(machine.handle(Self.input(reason)) == [.stopped(reason, kept: kept)])
        }
        #expect(machine.state == .ended)
        // Whatever comes later finds it ended: one end.
        #expect(machine.handle(.stop(.shutdown)).isEmpty)
        #expect(machine.handle(.fail(Self.tooSlow)).isEmpty)
        #expect(machine.handle(.paceTimerFired(Self.clock(10 * Self.second))).isEmpty)
        #expect(machine.handle(.hostChecked(.allowed, Self.clock())).isEmpty)
        #expect(machine.handle(.segmentRead(.success(Data(count: 1000)))).isEmpty)
        #expect(machine.handle(.requestEnded(nil, Self.clock())).isEmpty)
    }

    @Test func aStopBeforeTheFirstRequestSendsNothing() {
        var machine = Self.tus()
        #expect(machine.handle(.stop(.pause)) == [.stopped(.pause, kept: 0)])
        #expect(machine.handle(.start(Self.clock())).isEmpty)
    }

    @Test func aStartRefusedForItsHostOrSpoolCopyEndsBeforeTheFirstRequest() {
        var retried = Self.tus()
        #expect(retried.handle(.fail(Self.tooSlow)) == [.retryLater(Self.tooSlow, kept: 0)])
        #expect(retried.handle(.start(Self.clock())).isEmpty)
        var failed = Self.tus()
        #expect(failed.handle(.fail(Self.outOfTime)) == [.fail(Self.outOfTime.error)])
    }

    @Test func aPlainUploadCompletesWithTheServersAnswerOnce() {
        var machine = UploadMachine(attempt: UploadAttempt(settings: .init(url: Self.url, size: 3000, bodyLimit: 64)))
        #expect(machine.handle(.start(Self.clock())).count == 1)
        let answer = UploadAttempt.Response(status: 201, location: "/files/1", etag: nil, contentType: "text/plain", retryAfter: nil)
        #expect(machine.handle(.response(answer, Self.clock())) == [.acceptBody])
        #expect(machine.handle(.body(Data("stored".utf8))).isEmpty)
        let end = machine.handle(.requestEnded(nil, Self.clock()))
        #expect(end == [.complete(UploadResponse(status: 201, location: "/files/1", contentType: "text/plain", body: "stored", bodyEncoding: "utf8"))])
        #expect(machine.state == .ended)
        // A stop that crossed the end on its way finds nothing to stop.
        #expect(machine.handle(.stop(.pause)).isEmpty)
    }

    @Test func aCancelWhileThePaceWaitRunsEndsItAtOnceAndTheTimerFindsNothingToDo() {
        var machine = Self.paced()
        #expect(machine.handle(.cancel) == [.stopped(.cancel, kept: 1000)])
        #expect(machine.handle(.paceTimerFired(Self.clock(2 * Self.second, rate: 1000))).isEmpty)
    }

    @Test func aStoppedResumableUploadKeepsTheOffsetTheServerReportedNotTheBytesInFlight() {
        var machine = Self.appending(held: 2000)
        #expect(machine.handle(.stop(.pause)) == [.cancelRequest])
        // The server's answer to the cancelled append is not read.
        #expect(machine.handle(.response(Self.offset(3000), Self.clock())) == [.refuseBody])
        #expect(machine.handle(.requestEnded(nil, Self.clock())) == [.stopped(.pause, kept: 2000)])
    }

    @Test func aStoppedPlainUploadKeepsNothing() throws {
        var machine = UploadMachine(attempt: UploadAttempt(settings: .init(url: Self.url, size: 3000, bodyLimit: 64)))
        let start = machine.handle(.start(Self.clock()))
        guard case .send(let put, nil, 0)? = start.first else {
            Issue.record("no request: \(start)")
            return
        }
        #expect(put.body == .wholeFile)
        #expect(machine.handle(.stop(.yield)) == [.cancelRequest])
        #expect(machine.handle(.requestEnded(nil, Self.clock())) == [.stopped(.yield, kept: 0)])
    }

    // MARK: - Failures of a limit, and which decision stands

    @Test func aLimitFailureCancelsTheRequestAndEndsWithItsEnd() {
        var machine = Self.appending()
        #expect(machine.handle(.fail(Self.tooSlow)) == [.cancelRequest])
        #expect(machine.handle(.requestEnded(nil, Self.clock())) == [.retryLater(Self.tooSlow, kept: 1000)])
    }

    @Test func aFinalLimitFailureBetweenRequestsFailsTheJobAtOnce() {
        var machine = Self.paced()
        #expect(machine.handle(.fail(Self.outOfTime)) == [.fail(Self.outOfTime.error)])
    }

    @Test func aFailureDecidedFirstStandsAgainstALaterStop() {
        var machine = Self.appending()
        #expect(machine.handle(.fail(Self.tooSlow)) == [.cancelRequest])
        #expect(machine.handle(.stop(.pause)).isEmpty)
        #expect(machine.handle(.cancel).isEmpty)
        #expect(machine.handle(.requestEnded(nil, Self.clock())) == [.retryLater(Self.tooSlow, kept: 1000)])
    }

    @Test func aStopDecidedFirstStandsAgainstALaterFailure() {
        var machine = Self.appending()
        #expect(machine.handle(.stop(.yield)) == [.cancelRequest])
        #expect(machine.handle(.fail(Self.outOfTime)).isEmpty)
        #expect(machine.handle(.stop(.pause)).isEmpty)
        #expect(machine.handle(.requestEnded(nil, Self.clock())) == [.stopped(.yield, kept: 1000)])
    }

    @Test func anAnswerThatIsNotHTTPEndsTheUploadOnce() {
        var machine = Self.appending()
        let actions = machine.handle(.response(nil, Self.clock()))
        #expect(actions.first == .refuseBody && actions.count == 2)
        guard case .fail(let error)? = actions.last else {
            Issue.record("no failure: \(actions)")
            return
        }
        #expect(error.code == .protocolViolation)
        #expect(machine.handle(.requestEnded(nil, Self.clock())).isEmpty)
    }

    // MARK: - The host check of a new origin

    @Test func aResourceOfAnotherOriginIsSentOnlyOnceTheHostRulesAllowIt() {
        var machine = Self.machine(in: .checkingHost)
        let actions = machine.handle(.hostChecked(.allowed, Self.clock()))
        guard case .send(let head, nil, 0)? = actions.first else {
            Issue.record("no request: \(actions)")
            return
        }
        #expect(head.method == "HEAD" && head.url == Self.elsewhere)
        #expect(machine.admittedOrigins.contains(HTTPOrigin(Self.elsewhere)!))
    }

    @Test func aRefusedOriginFailsTheJobAndAnUnresolvedOneIsRetried() {
        var refused = Self.machine(in: .checkingHost)
        guard case .fail(let error)? = refused.handle(.hostChecked(.refused("not in allowed_hosts"), Self.clock())).first else {
            Issue.record("no failure")
            return
        }
        #expect(error.code == .hostNotAllowed && error.message.contains("not in allowed_hosts"))
        var unresolved = Self.machine(in: .checkingHost)
        let retry = unresolved.handle(.hostChecked(.unresolved("no such name"), Self.clock()))
        #expect(retry == [.retryLater(.transient(JobError(code: .dns, message: "no such name")), kept: 0)])
    }

    @Test func aSpoolCopyThatCannotBeReadFailsTheJob() {
        var machine = Self.reading()
        let actions = machine.handle(.segmentRead(.failure(CoreError(.internalFailure, "cannot read the spool copy"))))
        #expect(actions == [.fail(JobError(code: .disk, message: "cannot read the spool copy"))])
    }

    // MARK: - The pace

    @Test func anAppendWaitsForItsPaceAndGoesOutWhenTheTimerFires() {
        var machine = Self.paced()
        #expect(machine.state == .paced(machine.pacedRequest, due: 2 * Self.second))
        // Woken early (a rate limits' window may begin): it waits again for the same time.
        #expect(machine.handle(.paceTimerFired(Self.clock(Self.second + Self.second / 2, rate: 1000))) == [.wake(at: 2 * Self.second)])
        #expect(machine.handle(.paceTimerFired(Self.clock(2 * Self.second, rate: 1000))) == [.read(1000..<2000)])
    }

    @Test func aLimitLiftedDuringThePaceWaitSendsAtOnceAndARaisedOneSooner() {
        var lifted = Self.paced()
        #expect(lifted.handle(.paceTimerFired(Self.clock(Self.second + Self.second / 5, rate: nil))) == [.read(1000..<2000)])
        var raised = Self.paced()
        // Twice the rate: the 1,000 bytes are due half a second after they began.
        #expect(raised.handle(.paceTimerFired(Self.clock(Self.second + Self.second / 5, rate: 2000))) == [.wake(at: Self.second + Self.second / 2)])
    }
}

extension UploadMachine {
    /// The request a paced machine holds (for the tests' expectations).
    fileprivate var pacedRequest: UploadAttempt.Request {
        if case .paced(let request, _) = state { return request }
        return UploadAttempt.Request(method: "", url: URL(fileURLWithPath: "/"), headers: [:], body: .none)
    }
}
