import Foundation
import Testing
import TransferProtocol
@testable import transferctl

/// `transferctl status ID` as it renders a job's error.
@Suite("Job detail")
struct JobDetailTests {
    private func job(error: String) throws -> Job {
        let line = #"{"attempts":1,"bytes_received":0,"created_at":"2026-11-22T10:00:00.000Z","destination":"/srv/f","error":"#
            + error + #","header_names":[],"id":"a","overwrite":false,"owner":1000,"state":"failed","url":"https://example.com/f"}"#
        return try WireCoding.decoder().decode(Job.self, from: Data(line.utf8))
    }

    @Test func anErrorShowsItsCodeAndStatus() throws {
        let text = JobDetail(job: try job(error: #"{"code":"http_status","http_status":404,"message":"not found"}"#)).render()
        #expect(text.contains("error:") && text.contains("not found (http_status, HTTP 404)"), "\(text)")
    }

    /// A newer daemon may send a code this transferctl does not know: shown as sent.
    @Test func aCodeThisVersionDoesNotKnowIsShownAsSent() throws {
        let text = JobDetail(job: try job(error: #"{"code":"quota_exceeded","http_status":507,"message":"over quota"}"#)).render()
        #expect(text.contains("over quota (quota_exceeded, HTTP 507)"), "\(text)")
    }

    private func download(_ fields: String) throws -> Job {
        let line = #"{"attempts":1,"bytes_received":0,"created_at":"2026-11-22T10:00:00.000Z","destination":"/srv/f","#
            + #""header_names":[],"id":"a","overwrite":false,"owner":1000,"state":"completed","url":"https://example.com/f","#
            + fields + "}"
        return try WireCoding.decoder().decode(Job.self, from: Data(line.utf8))
    }

    /// A job that asked for several connections shows the ones it uses, and why, when fewer.
    @Test func segmentsShowTheConnectionsUsedAndWhy() throws {
        let fewer = JobDetail(
            job: try download(#""segments":4,"connections":1,"connections_reason":"the server does not take ranges""#)).render()
        #expect(fewer.contains("segments:") && fewer.contains("1 connection of the 4 asked: the server does not take ranges"), "\(fewer)")
        #expect(!fewer.contains("4 connections"), "\(fewer)")
        let all = JobDetail(job: try download(#""segments":4"#)).render()
        #expect(all.contains("up to 4 connections"), "\(all)")
    }
}
