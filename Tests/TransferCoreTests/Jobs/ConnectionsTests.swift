import Foundation
import Testing
import TransferProtocol
@testable import TransferCore

/// A download that asked for several connections and got one says so, and why, in its status.
@Suite("Connections a download uses")
struct ConnectionsTests {
    @Test func aServerWithoutRangesShowsOneConnectionAndWhyEvenOnceCompleted() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (manager, engine) = try await startedScriptedCore(in: directory, slots: 1)
        var params = Submit.Params(url: "http://127.0.0.1:1/whole", destination: directory.file("whole"), id: "whole")
        params.segments = 4
        _ = try await manager.submit(params, owner: 0)
        try await eventually("it starts") { engine.started.count == 1 }
        let asked = try #require(try await manager.status(id: "whole", states: nil, caller: 0).first)
        #expect(asked.segments == 4 && asked.connections == nil, "nothing is known before the server answers")

        engine.report(.responded(
            jobID: "whole", totalBytes: 100, validator: nil, startOffset: 0, partialInode: 1, generation: 0, finalURL: nil,
            rangesRefused: true))
        try await eventually("the answer is applied") {
            (try? await manager.status(id: "whole", states: nil, caller: 0).first?.connections) == 1
        }
        engine.report(.completed(jobID: "whole", bytes: 100, sha256: String(repeating: "0", count: 64)))
        try await eventually("it completes") {
            (try? await manager.status(id: "whole", states: nil, caller: 0).first?.state) == .completed
        }
        let done = try #require(try await manager.status(id: "whole", states: nil, caller: 0).first)
        #expect(done.segments == 4 && done.connections == 1)
        #expect(done.connectionsReason == Job.ConnectionsReason.rangesRefused)
    }
}
