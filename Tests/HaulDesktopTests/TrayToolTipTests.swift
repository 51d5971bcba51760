import DBusKit
import HaulContract
import HaulDesktop
import Testing

@Suite(.timeLimit(.minutes(2))) struct TrayToolTipTests {
    @Test func idle() {
        #expect(TrayToolTip(tasks: [TaskSnapshot]()).subTitle == "No transfers running")
        #expect(TrayToolTip(tasks: [Tasks.download(.completed)]).subTitle == "No transfers running")
    }

    @Test func runningTransfersAreNamedWithTheirProgress() {
        let tasks = [
            Tasks.download(bytes: 42, expected: 100, file: "/d/a.iso", id: 1),
            Tasks.download(bytes: 5, file: "/d/b.bin", id: 2),
            Tasks.download(.suspended, file: "/d/c.bin", id: 3),
        ]
        let tip = TrayToolTip(tasks: tasks)
        #expect(tip.title == "Haul")
        #expect(tip.subTitle == "2 transfers: a.iso 42%, b.bin; 1 suspended")
    }

    /// Queued tasks are counted, with their reason when they share one.
    @Test func queuedTransfersAreCountedWithTheirReason() {
        let running = Tasks.download(bytes: 42, expected: 100, file: "/d/a.iso", id: 1)
        let network = [Tasks.queued(.network, id: 2), Tasks.queued(.network, id: 3)]
        #expect(TrayToolTip(tasks: [running] + network).subTitle == "1 transfer: a.iso 42%; 2 queued, waiting for the network")
        let mixed = network + [Tasks.queued(.slot, id: 4)]
        #expect(TrayToolTip(tasks: mixed).subTitle == "3 queued")
    }

    @Test func manyTransfersAreCounted() {
        let tasks = (1...5).map { Tasks.download(file: "/d/\($0).bin", id: UInt32($0)) }
        #expect(TrayToolTip(tasks: tasks).subTitle == "5 transfers: 1.bin, 2.bin, 3.bin, and 2 more")
        #expect(TrayToolTip(tasks: tasks.reversed()) == TrayToolTip(tasks: tasks), "named by id, in any order")
    }

    @Test func theValueHasTheToolTipSignature() {
        #expect(TrayToolTip(tasks: []).value.type.signature == "(sa(iiay)ss)")
    }
}
