import Foundation
import Testing
import TransferProtocol

@Suite("JSON nesting scan")
struct JSONNestingTests {
    private func depth(_ text: String, limit: Int = .max) -> Int {
        JSONNesting.depth(of: Array(text.utf8), stoppingAfter: limit)
    }

    @Test func countsArraysAndObjects() {
        #expect(depth("1") == 0)
        #expect(depth(#""text""#) == 0)
        #expect(depth("{}") == 1)
        #expect(depth("[]") == 1)
        #expect(depth(#"{"a":[1,{"b":[]}],"c":{}}"#) == 4)
        #expect(depth("[[],[[]],[]]") == 3)
    }

    @Test func deeplyNestedArraysAndObjectsAreMeasured() {
        let arrays = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
        #expect(depth(arrays) == 10_000)
        let objects = String(repeating: #"{"a":"#, count: 500) + "1" + String(repeating: "}", count: 500)
        #expect(depth(objects) == 500)
        #expect(depth(arrays, limit: 32) == 33, "the scan stops one level past the limit")
        #expect(JSONNesting.exceeds(32, in: Array(arrays.utf8)))
        #expect(!JSONNesting.exceeds(10_000, in: Array(arrays.utf8)))
    }

    @Test func bracketsInsideStringsDoNotCount() {
        #expect(depth(#"{"a":"[[[[{{{{"}"#) == 1)
        #expect(depth(#"["]]]]", "}}}", [1]]"#) == 2)
        let deepText = #"{"id":""# + String(repeating: "[", count: 1000) + #""}"#
        #expect(depth(deepText) == 1)
    }

    @Test func escapedQuotesAndBackslashesKeepTheStringOpenOrCloseIt() {
        // An escaped quote does not end the string: the brackets after it are still text.
        #expect(depth(#"["a\"[[[[", 1]"#) == 1)
        // An escaped backslash does not escape the quote after it: the string ends there.
        #expect(depth(#"["a\\", [[1]]]"#) == 3)
        #expect(depth(#"["\\\"[[", [1]]"#) == 2)
        #expect(depth(#"["\u005b", {"k":"\/"}]"#) == 2)
    }

    @Test func closersWithoutOpenersDoNotHideDepth() {
        #expect(depth("]]]][[[") == 3)
        #expect(depth("}{[") == 2)
    }

    @Test func agreesWithTheParserOnValidJSON() throws {
        let samples = [
            #"{"jsonrpc":"2.0","id":1,"method":"submit","params":{"url":"http://h/x","destination":"/tmp/x","headers":{"A":"[{"}}}"#,
            #"[[1,[2,[3,[4]]]],{"a":{"b":{"c":["\"]"]}}}]"#,
            #"{"a":"\\","b":[{"c":"\\\""}]}"#,
        ]
        for sample in samples {
            let object = try JSONSerialization.jsonObject(with: Data(sample.utf8))
            #expect(depth(sample) == nesting(of: object), "\(sample)")
        }
    }

    private func nesting(of value: Any) -> Int {
        if let array = value as? [Any] { return 1 + (array.map(nesting).max() ?? 0) }
        if let object = value as? [String: Any] { return 1 + (object.values.map(nesting).max() ?? 0) }
        return 0
    }
}
