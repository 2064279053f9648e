import Foundation
import Testing
import TransferProtocol

@Suite("Job error codes")
struct JobErrorCodeTests {
    /// The wire strings clients and scripts match on: renaming a case must not change one.
    @Test func wireStringsAreStable() {
        #expect(JobErrorCode.sentCodes.map(\.rawValue) == [
            "http_status", "timeout", "too_slow", "dns", "connection_refused", "connection_lost", "network", "disk_full",
            "tls", "redirect", "protocol", "unsupported_url", "invalid_job", "host_not_allowed", "size_mismatch",
            "digest_mismatch", "content_encoding", "disk", "destination_exists", "time_limit",
        ])
        #expect(!JobErrorCode.sentCodes.contains(.unrecognized))
    }

    @Test(arguments: JobErrorCode.sentCodes)
    func eachCodeRoundTripsAsItsWireString(code: JobErrorCode) throws {
        let error = JobError(code: code, message: "m", httpStatus: code == .httpStatus ? 503 : nil)
        let data = try WireCoding.encoder().encode(error)
        #expect(String(decoding: data, as: UTF8.self).contains(#""code":"\#(code.rawValue)""#))
        let decoded = try WireCoding.decoder().decode(JobError.self, from: data)
        #expect(decoded == error)
        #expect(decoded.code == code)
        #expect(decoded.rawCode == code.rawValue)
    }

    /// A newer daemon may send a code this client does not know; a journal may hold one a newer
    /// version wrote. Neither may fail to decode, and the string is written back unchanged.
    @Test func anUnknownCodeDecodesAndIsKeptAsSent() throws {
        let line = #"{"attempts":2,"created_at":"2026-11-22T10:00:00.000Z","destination":"/srv/f","error":{"code":"quota_exceeded","http_status":507,"message":"over quota"},"header_names":[],"id":"a","overwrite":false,"owner":1000,"state":"failed","bytes_received":0,"url":"https://example.com/f"}"#
        let job = try WireCoding.decoder().decode(Job.self, from: Data(line.utf8))
        let error = try #require(job.error)
        #expect(error.code == .unrecognized)
        #expect(error.rawCode == "quota_exceeded")
        #expect(error.message == "over quota")
        #expect(error.httpStatus == 507)
        let again = String(decoding: try WireCoding.encoder().encode(job), as: UTF8.self)
        #expect(again.contains(#""error":{"code":"quota_exceeded","http_status":507,"message":"over quota"}"#), "\(again)")
        #expect(try WireCoding.decoder().decode(Job.self, from: Data(again.utf8)) == job)
    }

    @Test func settingACodeReplacesAnUnknownOne() throws {
        var error = try WireCoding.decoder().decode(JobError.self, from: Data(#"{"code":"later","message":"m"}"#.utf8))
        #expect(error.code == .unrecognized)
        error.code = .network
        #expect(error.rawCode == "network")
        #expect(error == JobError(code: .network, message: "m"))
    }

    @Test func aCodeThatIsNotAStringStillFailsToDecode() {
        #expect(throws: DecodingError.self) {
            try WireCoding.decoder().decode(JobError.self, from: Data(#"{"code":42,"message":"m"}"#.utf8))
        }
    }

    /// docs/protocol.md's table of job error codes lists exactly the codes the daemon sends.
    @Test func theProtocolDocumentListsEveryCode() throws {
        let document = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../docs/protocol.md").standardized
        let text = try String(contentsOf: document, encoding: .utf8)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let header = try #require(lines.firstIndex(of: "| code | retried | when |"), "no job error code table in \(document.path)")
        let rows = lines[(header + 2)...].prefix { $0.hasPrefix("| `") }
        let documented = rows.compactMap { row in row.split(separator: "`", maxSplits: 2).dropFirst().first.map(String.init) }
        #expect(documented == JobErrorCode.sentCodes.map(\.rawValue))
    }
}
