import DBusKit
import Foundation
import HaulContract
import HaulCore
import HaulService
import HaulTestSupport
import Testing

/// Every name, option, value and default of the contract target against what `dbus/org.haul.Haul1.xml` documents, in
/// both directions: each member, property, option and error of the document has a constant, and each constant is in
/// the document.
@Suite(.timeLimit(.minutes(2))) struct ContractNameTests {
    let document: ContractDocument

    init() throws { document = try ContractDocument() }

    @Test func everyMemberHasAConstantAndEveryConstantAMember() throws {
        let manager = try document.interface(HaulBus.managerInterface)
        #expect(manager.methods.map(\.name) == ManagerMethod.allCases.map(\.rawValue))
        #expect(manager.members.filter { $0.kind == "signal" }.map(\.name) == ManagerSignal.allCases.map(\.rawValue))
        #expect(manager.properties.map(\.name) == ManagerProperty.allCases.map(\.name))

        let indicator = try document.interface(HaulBus.indicatorInterface)
        #expect(indicator.methods.map(\.name) == IndicatorMethod.allCases.map(\.rawValue))
        #expect(
            indicator.members.filter { $0.kind == "signal" }.map(\.name) == IndicatorSignal.allCases.map(\.rawValue))
        #expect(indicator.properties.map(\.name) == IndicatorProperty.allCases.map(\.name))

        let task = try document.interface(HaulBus.taskInterface)
        #expect(task.methods.map(\.name) == TaskMethod.allCases.map(\.rawValue))
        #expect(task.members.filter { $0.kind == "signal" }.isEmpty)
        #expect(task.properties.map(\.name) == TaskProperty.allCases.map(\.name))
    }

    @Test func everyPropertyConstantHasTheDocumentedTypeAndAccess() throws {
        func check<P: ContractProperty>(_: P.Type, _ interface: String) throws {
            let documented = try document.interface(interface).properties
            for property in P.allCases {
                let entry = try #require(documented.first { $0.name == property.name }, "\(property.name)")
                #expect(entry.type == property.type.signature, "\(property.name)")
                #expect(entry.access == (property.isWritable ? "readwrite" : "read"), "\(property.name)")
            }
        }
        try check(ManagerProperty.self, HaulBus.managerInterface)
        try check(IndicatorProperty.self, HaulBus.indicatorInterface)
        try check(TaskProperty.self, HaulBus.taskInterface)
    }

    @Test func theErrorsAreTheDocumentedOnes() throws {
        let names = HaulErrorName.allCases.map(\.rawValue)
        #expect(try document.errorList(prefix: HaulErrorName.prefix) == names)
        #expect(document.mentionedErrors(prefix: HaulErrorName.prefix).isSubset(of: names))
        for error in HaulErrorName.allCases {
            #expect(HaulErrorName(fullName: error.fullName) == error)
        }
        #expect(HaulErrorName(fullName: "org.freedesktop.DBus.Error.Failed") == nil)
    }

    @Test func theStatesAndKindsAreTheDocumentedOnes() throws {
        let taskState = try document.comment(before: "property", TaskProperty.state.name, in: HaulBus.taskInterface)
        #expect(ContractDocument.quoted(in: taskState) == TaskStateName.allCases.map(\.rawValue))
        let kind = try document.comment(before: "property", TaskProperty.kind.name, in: HaulBus.taskInterface)
        #expect(ContractDocument.quoted(in: kind) == TaskKindName.allCases.map(\.rawValue))
        let indicatorState = try document.comment(
            before: "property", IndicatorProperty.state.name, in: HaulBus.indicatorInterface
        )
        #expect(ContractDocument.quoted(in: indicatorState) == IndicatorStateName.allCases.map(\.rawValue))
    }

    @Test func theOptionsAreTheDocumentedOnes() throws {
        let download = try document.comment(
            before: "method", ManagerMethod.downloadWithOptions.rawValue, in: HaulBus.managerInterface
        )
        #expect(ContractDocument.optionTable(in: download).map(\.key) == DownloadOption.allCases.map(\.rawValue))
        #expect(
            ContractDocument.optionTable(in: download).map(\.signature)
                == DownloadOption.allCases.map(\.type.signature))
        let range = DownloadOption.connectionRange
        let text = ContractDocument.flattened(download)
        #expect(text.contains("may use, \(range.lowerBound) to \(range.upperBound) (default"))
        typealias Limits = RequestHeaderLimits
        #expect(text.contains("at most \(Limits.maximumCount), each line"))
        #expect(text.contains("at most \(Limits.maximumLineBytes / 1024) KiB, all together"))
        #expect(text.contains("all together at most \(Limits.maximumBytes / 1024) KiB"))

        let upload = try document.comment(
            before: "method", ManagerMethod.uploadWithOptions.rawValue, in: HaulBus.managerInterface
        )
        let table = ContractDocument.optionTable(in: upload)
        #expect(table.map(\.key) == UploadOption.allCases.map(\.rawValue))
        #expect(table.map(\.signature) == UploadOption.allCases.map(\.type.signature))
        let methodRow = try #require(upload.split(separator: "\n").first { $0.contains(UploadOption.method.rawValue) })
        #expect(ContractDocument.quoted(in: String(methodRow)) == UploadMethodName.allCases.map(\.rawValue))
    }

    @Test func theDefaultsAndLimitsAreTheDocumentedOnes() throws {
        let indicator = HaulBus.indicatorInterface
        let activation = try document.comment(before: "property", IndicatorProperty.activationDelay.name, in: indicator)
        #expect(activation.contains("(default \(IndicatorDefaults.activationDelay))"))
        let completion = try document.comment(before: "property", IndicatorProperty.completionDelay.name, in: indicator)
        #expect(completion.contains("(default \(IndicatorDefaults.completionDelay))"))
        let enabled = try document.comment(before: "property", IndicatorProperty.enabled.name, in: indicator)
        #expect(enabled.contains("default \(IndicatorDefaults.enabled)"))
        let delays = IndicatorDefaults.delayRange
        #expect(
            ContractDocument.flattened(document.text)
                .contains("seconds from \(Int(delays.lowerBound)) to \(Int(delays.upperBound)) inclusive"))

        let connections = try document.comment(
            before: "property", ManagerProperty.defaultConnections.name, in: HaulBus.managerInterface
        )
        let range = DownloadOption.connectionRange
        let byDefault = ManagerSettings().defaultConnections
        #expect(
            ContractDocument.flattened(connections)
                .contains("(\(range.lowerBound) to \(range.upperBound), default \(byDefault):"))
    }

    /// The bus name, paths, interfaces and errors are spelled in the contract target alone; everywhere else they come
    /// from its constants.
    @Test func noOtherSwiftFileSpellsTheContractsNames() throws {
        let root = ContractDocument.repository
        let spellings = ["\"" + HaulBus.name, "\"" + HaulBus.rootPath.rawValue, "=" + HaulBus.name]
        var checked = 0
        for folder in ["Sources", "Benchmarks", "Tests"] {
            let files = FileManager.default.enumerator(atPath: root.appendingPathComponent(folder).path)
            while let file = files?.nextObject() as? String {
                let path = "\(folder)/\(file)"
                guard path.hasSuffix(".swift"), !path.hasPrefix("Sources/HaulContract/") else { continue }
                let text = try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
                checked += 1
                for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
                where spellings.contains(where: line.contains) {
                    Issue.record("\(path):\(number + 1) spells a name of the contract: \(line)")
                }
            }
        }
        #expect(checked > 100)
    }

    /// hauld's core keeps its own values for what it saves on disk; they are the contract's.
    @Test func theCoreAgreesWithTheContract() {
        #expect(
            IndicatorSettings()
                == IndicatorSettings(
                    enabled: IndicatorDefaults.enabled, activationDelay: IndicatorDefaults.activationDelay,
                    completionDelay: IndicatorDefaults.completionDelay
                ))
        #expect(IndicatorSettings.maximumDelaySeconds == IndicatorDefaults.delayRange.upperBound)
        #expect(IndicatorSettings.isValidDelay(IndicatorDefaults.delayRange.lowerBound))
        #expect(!IndicatorSettings.isValidDelay(IndicatorDefaults.delayRange.lowerBound.nextDown))
        #expect(DownloadOptions.connectionRange == DownloadOption.connectionRange)
    }

    /// The core's values map one to one onto the contract's names (an explicit switch each, in HaulService).
    @Test func theCoresValuesHaveDistinctContractNames() {
        #expect(Set(TransferErrorKind.allCases.map(HaulErrorName.init)).count == TransferErrorKind.allCases.count)
        // `queued` is not the lifecycle's: it is a running task the scheduler keeps waiting.
        #expect(Set(TransferTaskState.allCases.map(TaskStateName.init)).union([.queued]) == Set(TaskStateName.allCases))
        #expect(Set(TransferKind.allCases.map(TaskKindName.init)) == Set(TaskKindName.allCases))
        #expect(Set(ActivityIndicatorState.allCases.map(IndicatorStateName.init)) == Set(IndicatorStateName.allCases))
    }
}
