"""A minimal external controller for the lockstep tests (run as a child process): it answers every
/joint_states with a command holding the joints where they first were, until it is killed."""
import rclpy
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray


def main():
    with rclpy.init():
        node = rclpy.create_node("test_lockstep_controller")
        publisher = node.create_publisher(Float64MultiArray, "/forward_position_controller/commands", 10)
        hold = []

        def answer(msg):
            if not hold:
                hold.extend(msg.position[:8])
            publisher.publish(Float64MultiArray(data=hold))
        node.create_subscription(JointState, "/joint_states", answer, 10)
        executor = SingleThreadedExecutor()
        executor.add_node(node)
        try:
            executor.spin()
        except (KeyboardInterrupt, ExternalShutdownException):
            pass


if __name__ == "__main__":
    main()
