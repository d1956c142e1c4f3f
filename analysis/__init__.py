"""Facts computed over IR and its types that several layers use (DESIGN §1, layer 2).

An analysis reads IR and the system description and changes neither: memory effects
and roots of buffers, memory areas and copy routes, the devices owning memory, the
devices code works on, placement domains, the NumPy dtypes of scalar types.
"""
