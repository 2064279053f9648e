import Foundation
import Testing
import TransferTestSupport
@testable import TransferProtocol

@Suite("Wire format")
struct WireFormatTests {
    @Test func requestHeaderTellsAnAbsentIdFromNull() throws {
        let decoder = WireCoding.decoder()
        let notification = try decoder.decode(RPCRequestHeader.self, from: Data(#"{"jsonrpc":"2.0","method":"version"}"#.utf8))
        #expect(notification.id == nil)
        let nullID = try decoder.decode(RPCRequestHeader.self, from: Data(#"{"jsonrpc":"2.0","id":null,"method":"version"}"#.utf8))
        #expect(nullID.id == .null)
        let stringID = try decoder.decode(RPCRequestHeader.self, from: Data(#"{"jsonrpc":"2.0","id":"a","method":"x","params":{}}"#.utf8))
        #expect(stringID.id == .string("a"))
        #expect(stringID.hasParams)
    }

    @Test func jobsUseSnakeCaseKeysAndRoundTrip() throws {
        let job = Job(
            id: "abc", state: .running, url: "http://h/x", destination: "/tmp/x", bytesReceived: 5,
            totalBytes: 10, bytesPerSecond: 1, createdAt: Date(timeIntervalSince1970: 1_800_000_000.25),
            attempts: 1, error: JobError(code: .httpStatus, message: "m", httpStatus: 404), headerNames: ["Authorization"], owner: 1000)
        let data = try WireCoding.encoder().encode(job)
        let text = String(decoding: data, as: UTF8.self)
        for key in ["bytes_received", "total_bytes", "bytes_per_second", "created_at", "header_names", "http_status"] {
            #expect(text.contains("\"\(key)\""), "\(key) in \(text)")
        }
        #expect(!text.contains("\n"))
        #expect(try WireCoding.decoder().decode(Job.self, from: data) == job)
    }

    @Test func errorCodesAreStable() {
        #expect(RPCErrorCode.parseError.rawValue == -32700)
        #expect(RPCErrorCode.invalidRequest.rawValue == -32600)
        #expect(RPCErrorCode.methodNotFound.rawValue == -32601)
        #expect(RPCErrorCode.invalidParams.rawValue == -32602)
        #expect(RPCErrorCode.requestTooLarge.rawValue == 1000)
        #expect(RPCErrorCode.unsupportedURL.rawValue == 1001)
        #expect(RPCErrorCode.invalidDestination.rawValue == 1002)
        #expect(RPCErrorCode.destinationExists.rawValue == 1003)
        #expect(RPCErrorCode.noSuchJob.rawValue == 1004)
        #expect(RPCErrorCode.jobFinished.rawValue == 1005)
        #expect(RPCErrorCode.idConflict.rawValue == 1006)
        #expect(RPCError(.destinationExists, "m").data?.name == "destination_exists")
    }

    @Test func socketPathsFollowFlagEnvironmentDefault() {
        #expect(DefaultPaths.daemonSocket(environment: ["TRANSFERD_SOCKET": "/x.sock"], uid: 1000, system: false) == "/x.sock")
        #expect(DefaultPaths.daemonSocket(environment: ["RUNTIME_DIRECTORY": "/run/transferd"], uid: 998, system: true) == "/run/transferd/transferd.sock")
        #expect(DefaultPaths.daemonSocket(environment: [:], uid: 998, system: true) == "/run/transferd/transferd.sock")
        #expect(DefaultPaths.daemonSocket(environment: ["XDG_RUNTIME_DIR": "/run/user/1000"], uid: 1000, system: false) == "/run/user/1000/transferd/transferd.sock")
        // Root by hand is its own user: without XDG_RUNTIME_DIR, /run/user/0, which root may create.
        #expect(DefaultPaths.daemonSocket(environment: [:], uid: 0, system: false) == "/run/user/0/transferd/transferd.sock")
        #expect(DefaultPaths.userSocket(environment: [:], uid: 4_000_000_001) == "/tmp/transferd-4000000001/transferd.sock", "no /run/user/UID")
        #expect(DefaultPaths.clientSocketCandidates(environment: ["XDG_RUNTIME_DIR": "/run/user/7"], uid: 7) == ["/run/user/7/transferd/transferd.sock", "/run/transferd/transferd.sock"])
        #expect(DefaultPaths.clientSocketCandidates(environment: [:], uid: 0) == ["/run/user/0/transferd/transferd.sock", "/run/transferd/transferd.sock"])
    }

    @Test func stateAndConfigurationFollowTheRole() {
        #expect(DefaultPaths.stateDirectory(environment: ["HOME": "/home/u"], uid: 1000, system: false) == "/home/u/.local/state/transferd")
        #expect(DefaultPaths.stateDirectory(environment: ["HOME": "/root"], uid: 0, system: false) == "/root/.local/state/transferd")
        #expect(DefaultPaths.stateDirectory(environment: ["STATE_DIRECTORY": "/var/lib/transferd"], uid: 998, system: true) == "/var/lib/transferd")
        #expect(DefaultPaths.stateDirectory(environment: [:], uid: 998, system: true) == "/var/lib/transferd")
        #expect(DefaultPaths.configFile(environment: ["HOME": "/home/u"], uid: 1000, system: false) == "/home/u/.config/transferd/transferd.json")
        #expect(DefaultPaths.configFile(environment: ["HOME": "/home/u", "XDG_CONFIG_HOME": "/cfg"], uid: 1000, system: false) == "/cfg/transferd/transferd.json")
        #expect(DefaultPaths.configFile(environment: ["HOME": "/root"], uid: 0, system: true) == "/etc/transferd/transferd.json")
    }

    @Test func timestampsKeepMilliseconds() throws {
        let date = Date(timeIntervalSince1970: 1_800_000_000.123)
        let text = WireCoding.formatTimestamp(date)
        #expect(text.hasSuffix("Z"))
        let parsed = try #require(WireCoding.parseTimestamp(text))
        #expect(abs(parsed.timeIntervalSince(date)) < 0.001)
    }

    /// The times written from `gmtime_r` are the format style's, digit for digit: edges of a second
    /// and of the range, and random times (fixed seed) from 1970 to 9999 and around now.
    @Test func timestampsAreTheFormatStyles() {
        let style = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
        var times: [Double] = [0, 0.000_4, 0.000_999_9, 0.999_5, 0.999_999, 1, 951_782_400.5, 1_764_182_870.301, 1_764_182_870.999_9, 253_402_300_799.999]
        var generator = SplitMix64(seed: 25)
        var dates = times.map { Date(timeIntervalSince1970: $0) }
        let now = Date().timeIntervalSinceReferenceDate
        for _ in 0..<20_000 {
            dates.append(Date(timeIntervalSince1970: Double(generator.next() % 253_402_300_800) + Double(generator.next() % 1_000_000) / 1_000_000))
            // As `Date()` makes them: since 2001, with every low bit; and near millisecond edges.
            let recent = now + Double(Int64(generator.next() % 400_000_000_000) - 200_000_000_000) / 1_000
            dates.append(Date(timeIntervalSinceReferenceDate: recent + Double(generator.next() % 1_000_000) / 1e9))
            dates.append(Date(timeIntervalSinceReferenceDate: recent.rounded(.down) + 0.999_999_9 + Double(generator.next() % 1000) / 1e12))
            dates.append(Date())
        }
        var differing: [String] = []
        for date in dates {
            let expected = date.formatted(style)
            if WireCoding.timestampText(date) != expected, differing.count < 5 {
                differing.append("\(date.timeIntervalSinceReferenceDate): \(expected) vs \(WireCoding.timestampText(date) ?? "nil")")
            }
        }
        #expect(differing.isEmpty, "\(differing)")
        // Outside 1970 to 9999 the format style writes them.
        #expect(WireCoding.timestampText(Date(timeIntervalSince1970: -1)) == nil)
        #expect(WireCoding.formatTimestamp(Date(timeIntervalSince1970: -1)) == Date(timeIntervalSince1970: -1).formatted(style))
    }
}

