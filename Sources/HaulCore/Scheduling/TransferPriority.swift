/// How urgently a task wants the network (D-Bus `Priority`), spelled as the contract spells it.
///
/// Declared in scheduling order: every foreground task that may run takes a free slot before any background one.
package enum TransferPriority: String, Sendable, Hashable, CaseIterable, Comparable {
    /// Something a person is waiting for: the default.
    case foreground
    /// Something that can wait: it also waits on a metered network (unless allowed) and in power-saver mode.
    case background

    package static func < (lhs: TransferPriority, rhs: TransferPriority) -> Bool {
        lhs == .foreground && rhs == .background
    }

    /// Whether a task of this priority may use a metered network when its creator did not say
    /// (D-Bus `AllowMetered`'s default), taken at creation: a later change of priority does not change it.
    package var allowsMeteredByDefault: Bool { self == .foreground }
}
