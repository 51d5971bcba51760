import DBusKit
import HaulContract
import Testing

/// A task as panels follow it: what `InterfacesAdded` said, changed by each `PropertiesChanged`; a value missing or
/// not of the contract's type reads as empty.
@Suite struct TaskSnapshotTests {
    @Test func changesApplyAndAWrongTypeReadsAsEmpty() {
        var task = Tasks.download(.running, bytes: 10, expected: 100, file: "/d/a.iso", id: 4)
        #expect(task.id == 4 && task.state == .running && task.fileName == "a.iso")
        #expect(task.bytesDone == 10 && task.bytesExpected == 100)
        task.apply(TaskProperty.values([.bytesReceived: .uint64(50), .downloadProgress: .double(0.5)]))
        #expect(task.bytesDone == 50 && task.percent == 50)
        task.apply([TaskProperty.state.name: .variant(.string("suspended"))])
        #expect(task.isSuspended, "a value still in its variant is read")
        task.apply([TaskProperty.bytesExpectedToReceive.name: .string("lots"), TaskProperty.path.name: .uint32(1)])
        #expect(task.bytesExpected == -1 && task.path == "" && task.fileName == task.url)
        task.apply(["NoSuchProperty": .string("x")])
        #expect(task == {
            var expected = Tasks.download(.suspended, bytes: 50, file: "/d/a.iso", id: 4)
            expected.apply(TaskProperty.values([.downloadProgress: .double(0.5), .path: .string("")]))
            return expected
        }())
    }
}
