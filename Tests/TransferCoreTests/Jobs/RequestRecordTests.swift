import Foundation
import Testing
import TransferProtocol
@testable import TransferCore

/// A job's large fields (`req/<id>`) are journaled apart only when it has some.
@Suite("Large fields journaled apart")
struct RequestRecordTests {
    private func params(_ name: String, in directory: TemporaryDirectory, id: String? = nil, headers: [String: String]? = nil) -> Submit.Params {
        var params = Submit.Params(url: "http://127.0.0.1:9/\(name)", destination: directory.file(name), id: id)
        params.headers = headers
        return params
    }

    @Test func aDownloadWithoutHeadersIsOneRecordAndOneWithHeadersTwo() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (manager, _) = try await startedScriptedCore(in: directory, slots: 0)
        let journal = await manager.journal
        let plain = try await manager.submit(params("plain", in: directory), owner: 0)
        let dressed = try await manager.submit(params("dressed", in: directory, headers: ["X-Token": "abc"]), owner: 0)
        #expect(journal.value(forKey: "job/\(plain.id)") != nil)
        #expect(journal.value(forKey: "req/\(plain.id)") == nil)
        let request = try #require(journal.value(forKey: "req/\(dressed.id)"))
        #expect(String(decoding: request, as: UTF8.self).contains("abc"))
        #expect(try await manager.status(id: dressed.id, states: nil, caller: 0).first?.headerNames == ["X-Token"])
    }

    /// A plain download that replaces a job with headers leaves none of them in the journal.
    @Test func aReplacementWithoutHeadersDropsTheLargeFieldsOfTheJobItReplaces() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (manager, _) = try await startedScriptedCore(in: directory, slots: 0)
        let journal = await manager.journal
        _ = try await manager.submit(params("first", in: directory, id: "nightly", headers: ["X-Token": "abc"]), owner: 0)
        #expect(journal.value(forKey: "req/nightly") != nil)
        _ = try await manager.cancel(id: "nightly", caller: 0)
        var again = params("second", in: directory, id: "nightly")
        again.replace = true
        _ = try await manager.submit(again, owner: 0)
        #expect(journal.value(forKey: "req/nightly") == nil)
        #expect(try await manager.status(id: "nightly", states: nil, caller: 0).first?.url == "http://127.0.0.1:9/second")
    }
}
