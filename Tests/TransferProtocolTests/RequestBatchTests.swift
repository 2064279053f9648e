import Foundation
import Testing
import TransferProtocol

@Suite("Request batches")
struct RequestBatchTests {
    private func elements(_ line: String) -> [String]? {
        RequestBatch.elements(of: Data(line.utf8))?.map { String(decoding: $0, as: UTF8.self) }
    }

    @Test func aBatchIsALineWhoseFirstValueIsAnArray() {
        #expect(RequestBatch.isBatch(Data(" \t[1]".utf8)))
        #expect(!RequestBatch.isBatch(Data(#"{"a":[1]}"#.utf8)))
        #expect(!RequestBatch.isBatch(Data()))
    }

    @Test func elementsAreCutAtTheOuterCommasOnly() {
        let line = #"[ {"a":"x,y]","b":[1,{"c":"\"],["}]} , 2,"s\\",[],null ]"#
        #expect(elements(line) == [#"{"a":"x,y]","b":[1,{"c":"\"],["}]}"#, "2", #""s\\""#, "[]", "null"])
    }

    @Test func anEmptyBatchHasNoElements() {
        #expect(elements("[]") == [])
        #expect(elements(" [ \n ] ") == [])
    }

    @Test func aLineThatIsNotAJSONArrayHasNone() {
        #expect(elements(#"[{"a":1},"#) == nil)
        #expect(elements(#"[1] [2]"#) == nil)
        #expect(elements(#"{"a":1}"#) == nil)
    }
}
