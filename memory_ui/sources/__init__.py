"""The memory systems the portal fronts: the protocol every source implements and one
package per source."""
