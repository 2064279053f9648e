// The protocol's types (`Job`, `JobState`, `JobErrorCode`, …) are part of TransferKit's API: a
// program that imports TransferKit gets them too.
@_exported public import TransferProtocol
