"""Facts computed over IR and its types that several layers use (layer 2 of ARCHITECTURE.md).

An analysis reads IR and the system description and changes neither: memory effects
and roots of buffers, memory areas and copy routes, the devices owning memory, the
devices code works on, placement domains, the NumPy dtypes of scalar types.
"""
