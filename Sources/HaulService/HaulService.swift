// Binds HaulCore to the bus.
