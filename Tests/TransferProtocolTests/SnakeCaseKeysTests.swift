import Foundation
import Testing
@testable import TransferProtocol

/// The remembered key conversions give exactly what Foundation's strategies give.
@Suite("Snake-case keys")
struct SnakeCaseKeysTests {
    private struct Sample: Codable, Equatable {
        var bytesPerSecond = 1
        var expectedSha256 = "x"
        var finalURL = "u"
        var myHTTPServer = 2
        var idChosenByClient = true
        var url = "v"
        var _leading = 3
        // Keys without a capital letter are kept without a lookup: Foundation keeps them too.
        var sha256 = 5
        var trailing_ = 6
        var already_snake = 7
        var nested = Nested()
    }

    private struct Nested: Codable, Equatable {
        var nextAttemptAt = 4
        var headerNames = ["a"]
    }

    @Test func encodedKeysAreFoundations() throws {
        let foundation = JSONEncoder()
        foundation.keyEncodingStrategy = .convertToSnakeCase
        foundation.outputFormatting = .sortedKeys
        let ours = JSONEncoder()
        ours.keyEncodingStrategy = SnakeCaseKeys.encodingStrategy
        ours.outputFormatting = .sortedKeys
        let expected = try foundation.encode(Sample())
        #expect(try ours.encode(Sample()) == expected, "\(String(decoding: expected, as: UTF8.self))")
        // Twice: the second time from what was remembered.
        #expect(try ours.encode(Sample()) == expected)
    }

    @Test func decodedKeysAreFoundations() throws {
        let json = Data(#"{"bytes_per_second":9,"expected_sha256":"y","final_url":"w","my_http_server":8,"id_chosen_by_client":false,"url":"z","_leading":7,"nested":{"next_attempt_at":6,"header_names":[]}}"#.utf8)
        let foundation = JSONDecoder()
        foundation.keyDecodingStrategy = .convertFromSnakeCase
        let ours = JSONDecoder()
        ours.keyDecodingStrategy = SnakeCaseKeys.decodingStrategy
        // Foundation cannot read back every key it writes (final_url is finalUrl, not finalURL): ours agrees.
        #expect(throws: (any Error).self) { try foundation.decode(Sample.self, from: json) }
        #expect(throws: (any Error).self) { try ours.decode(Sample.self, from: json) }
        for key in ["bytes_per_second", "expected_sha256", "final_url", "my_http_server", "_leading", "__x__", "a__b", "x"] {
            let data = try JSONSerialization.data(withJSONObject: [key: 1])
            struct Keys: Decodable {
                var keys: [String]
                init(from decoder: any Decoder) throws { keys = try decoder.container(keyedBy: WireKey.self).allKeys.map(\.stringValue) }
            }
            #expect(try ours.decode(Keys.self, from: data).keys == foundation.decode(Keys.self, from: data).keys, "\(key)")
        }
    }
}
