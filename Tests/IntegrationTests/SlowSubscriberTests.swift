import Foundation
import Synchronization
import Testing
import TransferProtocol
import TransferTestSupport

@Suite("Slow subscribers")
struct SlowSubscriberTests {
    @Test func aSubscriberThatStopsReadingIsDroppedWithANoticeWhileOthersAreServed() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon(configuration: ["max_concurrent_transfers": 1, "subscriber_queue_events": 100])
        defer { daemon.cleanUp() }
        server.serve("/blocker", content: TestContent(seed: 1, size: 1 << 20), behaviour: .trickle(bytesPerSecond: 2000))
        try await daemon.start()

        // Subscribes, then never reads another byte.
        let stuck = try EventStream(socket: daemon.socketPath, .init(), timeout: .seconds(30))
        // Reads everything, on its own thread.
        let healthy = try EventStream(socket: daemon.socketPath, .init())
        let queuedSeen = Atomic<Int>(0)
        let reader = Thread {
            while let item = try? healthy.next() {
                if case .event(let event) = item, event.type == .queued, event.job.destination.hasSuffix("-q") {
                    if queuedSeen.add(1, ordering: .relaxed).newValue == 1000 { return }
                }
            }
        }
        reader.start()
        let before = try #require(daemon.peakRSS())

        _ = try daemon.submit(server.url("/blocker"), to: daemon.destination("blocker"))
        // Once the daemon has given up on the stuck client, read what it was sent (the daemon waits
        // a while for it to take its last notification).
        let stuckLines = Mutex<[[UInt8]]?>(nil)
        let url = server.url("/never")
        // A thousand calls in a row: on a thread of their own, not one the other tests need.
        let (othersServed, drained) = try await offTheTestThreads { () throws -> (Bool, Bool) in
            let submitter = try daemon.client()
            var othersServed = true
            var drain: Thread?
            for index in 0..<1000 {
                _ = try submitter.call(Submit.self, .init(url: url, destination: daemon.destination("\(index)-q")))
                if index % 100 == 0 {
                    othersServed = othersServed && (try? daemon.client().call(Version.self, .init()).daemon) == transferdVersion
                }
                if drain == nil, index % 20 == 0, daemon.log.contains("reason=slow_subscriber") {
                    drain = Thread {
                        var lines: [[UInt8]] = []
                        while let line = try? stuck.client.readLine() { lines.append(line) }
                        stuckLines.withLock { $0 = lines }
                    }
                    drain?.start()
                }
            }
            return (othersServed, drain != nil)
        }
        #expect(othersServed, "other clients are served meanwhile")
        try await waitUntil("the reading subscriber to get all 1000 events") { queuedSeen.load(ordering: .relaxed) == 1000 }
        #expect(drained, "the stuck subscriber was dropped while the events were produced")
        try await waitUntil("the stuck client's connection to end") { stuckLines.withLock { $0 != nil } }
        let lines = stuckLines.withLock { $0 ?? [] }
        let last = try #require(lines.last)
        let notice = try WireCoding.decoder().decode(RPCNotification<Disconnect>.self, from: Data(last))
        #expect(notice.method == NotificationMethod.disconnect)
        #expect(notice.params.reason == "slow_subscriber")
        #expect(notice.params.message.contains("subscriber_queue_events"))
        #expect(lines.count < 1000, "the stuck client was cut off, not sent everything: \(lines.count) lines")

        let after = try #require(daemon.peakRSS())
        print("slow subscriber: \(lines.count - 1) lines reached it before the notice; peak RSS grew \((after - before) >> 10) KiB over 1000 events")
        #expect(after - before < 64 << 20, "peak RSS grew by \((after - before) >> 20) MiB")
        #expect(try daemon.client().call(Version.self, .init()).daemon == transferdVersion)
        try await server.shutdown()
    }
}
