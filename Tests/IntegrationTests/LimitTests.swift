import Foundation
import Testing
import TransferProtocol
import TransferTestSupport

@Suite("Limits")
struct LimitTests {
    /// The first line a fresh connection gets without asking: the refusal of an over-limit connection.
    private func refusal(on daemon: TestDaemon) throws -> RPCError? {
        let client = try ControlClient(socketPath: daemon.socketPath, timeout: .seconds(30))
        let line = try client.readLine()
        return try WireCoding.decoder().decode(RPCResponse<Job>.self, from: Data(line)).error
    }

    /// The JSON-RPC error `body` fails with, if any.
    private func rpcError(_ body: () throws -> Void) -> RPCError? {
        do {
            try body()
            return nil
        } catch {
            if case .rpc(let rpc) = error as? ControlClientError { return rpc }
            return nil
        }
    }

    private func expectServing(_ daemon: TestDaemon) throws {
        #expect(try daemon.client().call(Version.self, .init()).daemon == transferdVersion, "the daemon serves others")
    }

    @Test func anOverlongRequestLineIsRefusedNamingTheKey() async throws {
        let daemon = try TestDaemon(configuration: ["max_request_bytes": 2048])
        defer { daemon.cleanUp() }
        try await daemon.start()
        let client = try daemon.client()
        try client.sendLine(Array(#"{"jsonrpc":"2.0","id":1,"method":"status","params":{"id":""#.utf8) + Array(repeating: UInt8(ascii: "a"), count: 3000) + Array(#""}}"#.utf8))
        let error = try #require(try WireCoding.decoder().decode(RPCResponse<Job>.self, from: Data(client.readLine())).error)
        #expect(error.code == .requestTooLarge)
        #expect(error.message.contains("2048") && error.message.contains("max_request_bytes"), "\(error.message)")
        #expect(try client.call(Version.self, .init()).protocol == transferProtocolVersion, "the same connection goes on")
    }

    @Test func deeplyNestedRequestsAreRefusedBeforeParsing() async throws {
        let daemon = try TestDaemon(configuration: ["max_json_depth": 8])
        defer { daemon.cleanUp() }
        try await daemon.start()
        let client = try daemon.client()
        let nested = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        try client.sendLine(Array(#"{"jsonrpc":"2.0","id":1,"method":"status","params":{"x":"#.utf8) + Array(nested.utf8) + Array("}}".utf8))
        let error = try #require(try WireCoding.decoder().decode(RPCResponse<Job>.self, from: Data(client.readLine())).error)
        #expect(error.code == .requestTooDeep)
        #expect(error.message.contains("8 levels") && error.message.contains("max_json_depth"), "\(error.message)")
        #expect(try client.call(Version.self, .init()).protocol == transferProtocolVersion, "the same connection goes on")
        try expectServing(daemon)
    }

    @Test func unfinishedJobsPerUserAreLimited() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon(configuration: ["max_jobs_per_user": 3, "max_concurrent_transfers": 1])
        defer { daemon.cleanUp() }
        server.serve("/slow", content: TestContent(seed: 1, size: 1 << 20), behaviour: .trickle(bytesPerSecond: 10_000))
        try await daemon.start()
        let ids = try (0..<3).map { try daemon.submit(server.url("/slow"), to: daemon.destination("j\($0)")).id }
        let error = try #require(rpcError { _ = try daemon.submit(server.url("/slow"), to: daemon.destination("j3")) }, "a fourth unfinished job was accepted")
        #expect(error.code == .limitExceeded)
        #expect(error.message.contains("max_jobs_per_user"), "\(error.message)")
        try expectServing(daemon)
        // A finished job no longer counts.
        _ = try daemon.client().call(Cancel.self, .init(id: ids[0]))
        _ = try daemon.submit(server.url("/slow"), to: daemon.destination("j3"))
        try await server.shutdown()
    }

    @Test func connectionsPerUserAndInTotalAreLimited() async throws {
        let daemon = try TestDaemon(configuration: ["max_connections_per_user": 3])
        defer { daemon.cleanUp() }
        try await daemon.start()
        // The connections of start()'s probes may still be closing: take slots until three are served.
        var open: [ControlClient] = []
        try await waitUntil("three connections to be served") {
            if let client = try? daemon.client(), (try? client.call(Version.self, .init())) != nil { open.append(client) }
            return open.count == 3
        }
        let error = try #require(try refusal(on: daemon))
        #expect(error.code == .limitExceeded)
        #expect(error.message.contains("max_connections_per_user"), "\(error.message)")
        open.removeLast()
        try await waitUntil("a connection to be free again") { (try? daemon.client().call(Version.self, .init())) != nil }

        try daemon.writeConfiguration(["max_connections": 2, "root_reserved_connections": 0])
        daemon.send(SIGHUP)
        try await waitUntil("the reload") { daemon.log.contains("max_connections") }
        try await waitUntil("the total limit to refuse a connection") { (try? refusal(on: daemon))??.code == .limitExceeded }
        let total = try #require(try refusal(on: daemon))
        #expect(total.message.contains("max_connections"), "\(total.message)")
        open.removeAll()
        try await waitUntil("the daemon to serve again") { (try? daemon.client().call(Version.self, .init())) != nil }
    }

    @Test func subscriptionsPerConnectionAreLimited() async throws {
        let daemon = try TestDaemon(configuration: ["max_subscriptions_per_connection": 2])
        defer { daemon.cleanUp() }
        try await daemon.start()
        let client = try daemon.client()
        _ = try client.call(Subscribe.self, .init())
        _ = try client.call(Subscribe.self, .init(session: "s"))
        let error = try #require(rpcError { _ = try client.call(Subscribe.self, .init(session: "t")) }, "a third subscription was accepted")
        #expect(error.code == .limitExceeded)
        #expect(error.message.contains("max_subscriptions_per_connection"), "\(error.message)")
        #expect(try client.call(Version.self, .init()).protocol == transferProtocolVersion, "the connection goes on")
        try expectServing(daemon)
    }
}
